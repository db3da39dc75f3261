//! Dropping the bodies of old turns (retention): the turn rows and their figures stay, their
//! request reads back as [`crate::DROPPED_REQUEST_JSON`] and their reply as `None`, and the
//! stored parts nothing references any more are deleted. The file does not shrink by itself:
//! the freed pages are reused, or given back by a vacuum.

use rusqlite::{Connection, TransactionBehavior, params};
use serde::Serialize;

use crate::body_encoding::encode_dropped;
use crate::body_parts::release;
use crate::error::StoreError;
use crate::open::Store;
use crate::turns::TurnId;

/// Turns per transaction: the recorder waits for the write lock at most one batch.
const BATCH_TURNS: usize = 500;

/// What [`Store::drop_turn_bodies_before`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DroppedStats {
    /// Turns whose bodies were dropped.
    pub turns: u64,
    /// Stored parts deleted because no remaining turn referenced them.
    pub parts: u64,
    /// The bytes those bodies and parts took in their columns (compressed as stored).
    pub bytes: u64,
}

impl Store {
    /// Drops the request and reply of the turns created before `cutoff_ms`, oldest first, in
    /// batches (each its own transaction, so an interrupted run keeps what it did). Turns
    /// already dropped are skipped; turns not yet converted to the v9 layout are dropped too.
    pub fn drop_turn_bodies_before(&mut self, cutoff_ms: i64) -> Result<DroppedStats, StoreError> {
        let mut total = DroppedStats::default();
        loop {
            let (batch, more) = drop_batch(&mut self.conn, cutoff_ms)?;
            total.turns += batch.turns;
            total.parts += batch.parts;
            total.bytes += batch.bytes;
            if !more {
                return Ok(total);
            }
        }
    }
}

/// A turn to drop: its id, the bytes of its legacy columns, its stored bodies.
type Row = (i64, i64, Option<Vec<u8>>, Option<Vec<u8>>);

/// One batch; `true` when more turns may be left.
fn drop_batch(conn: &mut Connection, cutoff_ms: i64) -> Result<(DroppedStats, bool), StoreError> {
    let dropped = encode_dropped();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let rows: Vec<Row> = tx
        .prepare_cached(
            "SELECT id, octet_length(request_json) + COALESCE(octet_length(reply_json), 0),
                    request_body, reply_body
             FROM turns WHERE created_at_ms < ?1 AND request_body IS NOT ?2
             ORDER BY created_at_ms LIMIT ?3",
        )?
        .query_map(params![cutoff_ms, dropped, BATCH_TURNS as i64], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut stats = DroppedStats::default();
    for (id, text_len, request, reply) in &rows {
        stats.bytes += u64::try_from(*text_len).unwrap_or(0);
        for body in [request, reply].into_iter().flatten() {
            stats.bytes += body.len() as u64;
            match release(&tx, TurnId(*id), body) {
                Ok(released) => {
                    stats.parts += released.parts;
                    stats.bytes += released.bytes;
                }
                // A damaged body cannot say which parts it used; they stay (a leak, not a
                // loss), and the turn is dropped all the same.
                Err(e @ StoreError::BadBody { .. }) => {
                    tracing::warn!(error = %e, "dropping a damaged body");
                }
                Err(e) => return Err(e),
            }
        }
        tx.prepare_cached(
            "UPDATE turns SET request_json = '', request_body = ?2, reply_json = NULL,
                 reply_body = NULL
             WHERE id = ?1",
        )?
        .execute(params![id, dropped])?;
        stats.turns += 1;
    }
    tx.commit()?;
    Ok((stats, rows.len() == BATCH_TURNS))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::{DROPPED_REQUEST_JSON, NewTurn};

    fn turn(session: &str, at_ms: i64, messages: &[String]) -> NewTurn {
        let messages: Vec<String> = messages
            .iter()
            .map(|m| format!(r#"{{"role":"user","content":"{m}"}}"#))
            .collect();
        NewTurn {
            session_id: session.into(),
            turn_type: "main".into(),
            request_json: format!(r#"{{"model":"m","messages":[{}]}}"#, messages.join(",")),
            reply_json: Some(format!(r#"{{"content":"{}"}}"#, "a reply. ".repeat(40))),
            status: 200,
            input_tokens: Some(42),
            created_at_ms: at_ms,
            ..NewTurn::default()
        }
    }

    fn parts(store: &Store) -> i64 {
        store
            .conn
            .query_row("SELECT COUNT(*) FROM body_parts", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn old_requests_are_dropped_and_parts_only_they_used_are_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let shared = "a system prompt every conversation sends ".repeat(20);
        let (first, second, third) = (
            "first question ".repeat(30),
            "second question ".repeat(30),
            "third question ".repeat(30),
        );
        let old = turn("a", 10, &[shared.clone(), first.clone()]);
        let mid = turn("a", 20, &[shared.clone(), first.clone(), second.clone()]);
        let new = turn("b", 30, &[shared.clone(), third.clone()]);
        store
            .insert_turns(&[old.clone(), mid.clone(), new.clone()])
            .unwrap();
        // Each message and, apart, its text; and the text of the reply they share.
        assert_eq!(parts(&store), 9);

        let stats = store.drop_turn_bodies_before(15).unwrap();
        assert_eq!(
            (stats.turns, stats.parts),
            (1, 0),
            "all its parts still used"
        );
        assert!(stats.bytes > 0);
        let stats = store.drop_turn_bodies_before(25).unwrap();
        assert_eq!((stats.turns, stats.parts), (1, 4), "`first` and `second`");
        assert_eq!(parts(&store), 5);
        assert_eq!(
            store.drop_turn_bodies_before(25).unwrap(),
            DroppedStats::default()
        );

        let a = store.session_turns("a").unwrap();
        assert!(a.iter().all(|t| t.request_json == DROPPED_REQUEST_JSON));
        assert!(a.iter().all(|t| t.reply_json.is_none()));
        assert!(
            a.iter()
                .all(|t| t.input_tokens == Some(42) && t.status == 200)
        );
        assert_eq!(store.stats().unwrap().turns, 3);
        assert_eq!(
            store.session_turns("b").unwrap()[0].request_json,
            new.request_json
        );

        // A part dropped from every turn is stored afresh when it is sent again.
        store
            .insert_turns(&[turn("c", 40, std::slice::from_ref(&first))])
            .unwrap();
        assert_eq!(
            store.session_turns("c").unwrap()[0].request_json,
            turn("c", 40, &[first]).request_json
        );
        store.drop_turn_bodies_before(i64::MAX).unwrap();
        assert_eq!(parts(&store), 0);
        store.integrity_check().unwrap();
    }
}
