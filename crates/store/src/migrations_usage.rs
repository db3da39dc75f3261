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
