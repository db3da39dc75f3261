//! Schema v6: what each turn cost and what MetaClaw added to it.
//!
//! Token convention (both protocols): `input_tokens` is the whole prompt, cache reads and
//! cache writes included (OpenAI's `prompt_tokens`; Anthropic's `input_tokens +
//! cache_read_input_tokens + cache_creation_input_tokens`). `cache_read_tokens` and
//! `cache_write_tokens` are the parts of it read from and written to the provider's prompt
//! cache; NULL when the provider did not say. `injected_tokens` estimates every MetaClaw block
//! in the forwarded request (the resent ones too), `block_tokens` the block of this turn's
//! newest user message (or the system prompt), whose skills and memories the turn lists;
//! `injected_memories` is a JSON array of memory ids like `injected_skills`.
pub(crate) const V6_TURN_USAGE: &str = "
ALTER TABLE turns ADD COLUMN cache_read_tokens INTEGER NULL;
ALTER TABLE turns ADD COLUMN cache_write_tokens INTEGER NULL;
ALTER TABLE turns ADD COLUMN injected_tokens INTEGER NULL;
ALTER TABLE turns ADD COLUMN block_tokens INTEGER NULL;
ALTER TABLE turns ADD COLUMN injected_memories TEXT NULL;
";

/// Schema v7: what learning cost, per UTC day and purpose (`evolution`, `extraction`,
/// `embeddings`, `judge`, `other`): the calls MetaClaw made to a provider to learn, those that
/// failed, and their tokens in the convention of `turns` (`input_tokens` includes cache reads
/// and writes).
pub(crate) const V7_LEARNING_USAGE: &str = "
CREATE TABLE learning_usage (
    day                TEXT NOT NULL,
    purpose            TEXT NOT NULL,
    calls              INTEGER NOT NULL DEFAULT 0,
    failed             INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, purpose)
) WITHOUT ROWID;
";
