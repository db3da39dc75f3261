//! Schema v9: each part of a request or reply stored once per database, compressed.
//!
//! Agents resend the whole conversation every turn, so storing each request whole costs disk
//! with the square of a conversation's length. From v9 a body is split (`body_split`) into
//! parts — a request's messages, `system` prompt and `tools` list, and within those and in
//! replies their long strings — and its own text around them:
//!
//! - `body_parts` + `body_part_data`: one row per distinct part, addressed by a hash of its
//!   exact text (`body_parts::key`); its data is the text whole (zstd-compressed when that
//!   pays) or itself a skeleton around smaller parts, in the encoding of `body_encoding`.
//!   `refs` counts the references from turns' bodies and from other parts, so retention can
//!   drop a turn's bodies and then delete the parts nothing uses any more. Ids are never
//!   reused (AUTOINCREMENT): a stale reference cannot read another part. The counter sits in
//!   a narrow table apart from the data because every turn adds one to each part it resends:
//!   those updates dirty a few small pages, not the pages holding the text.
//! - `turns.request_body`, `turns.reply_body`: the request and the reply, whole (short, or
//!   not a JSON object) or as a skeleton. `request_json` is left empty and `reply_json` NULL.
//!   A NULL `request_body` is a turn not converted yet: its `request_json` and `reply_json`
//!   hold its bodies as before, and readers take them from there.
//!
//! Content-addressed parts rather than deltas against the previous turn of the session: a
//! part is shared across sessions too (an agent's system prompt and tool list are the same in
//! every conversation), no turn depends on another turn's row (retention can drop any of
//! them), and rebuilding a turn never walks a chain of turns.
//!
//! Turns stored before v9 are converted after this migration, in batches, each its own
//! transaction, behind the mark [`CONVERSION_MARK`] in `state` (`body_conversion`).

/// The `state` key holding the id from which turns remain to be converted; absent when none.
pub(crate) const CONVERSION_MARK: &str = "turns.body_layout.next_id";

pub(crate) const V9_BODY_PARTS: &str = "
ALTER TABLE turns ADD COLUMN request_body BLOB NULL;
ALTER TABLE turns ADD COLUMN reply_body BLOB NULL;

CREATE TABLE body_parts (
    id   INTEGER PRIMARY KEY AUTOINCREMENT,
    hash BLOB NOT NULL UNIQUE,
    refs INTEGER NOT NULL
);

CREATE TABLE body_part_data (
    id   INTEGER PRIMARY KEY REFERENCES body_parts(id),
    data BLOB NOT NULL
);

INSERT INTO state (key, value)
    SELECT 'turns.body_layout.next_id', '0' WHERE EXISTS (SELECT 1 FROM turns);
";

/// Schema v10: an injected block is stored once per database too. The same block goes to
/// many messages (every message of a session that asks alike, and every session), and was a
/// third of a long run's database. New rows keep `block` empty and reference the text from
/// `block_body` (a body, as `turns.request_body`); earlier rows keep their text in `block`.
pub(crate) const V10_SHARED_BLOCKS: &str = "
ALTER TABLE injected_blocks ADD COLUMN block_body BLOB NULL;
";

#[cfg(test)]
mod tests {
    #[test]
    fn the_migration_sets_the_mark_conversion_reads() {
        assert!(super::V9_BODY_PARTS.contains(&format!("'{}'", super::CONVERSION_MARK)));
    }
}
