//! Dropping the bodies of old turns (retention): the turn rows and their figures stay, their
//! request reads back as [`crate::DROPPED_REQUEST_JSON`] and their reply as `None`, and the
//! stored parts nothing references any more are deleted. The file does not shrink by itself:
//! the freed pages are reused, or given back by a vacuum.

use rusqlite::types::Value;
use rusqlite::{Connection, TransactionBehavior, params, params_from_iter};
use serde::Serialize;

use crate::body_encoding::encode_dropped;
use crate::body_parts::release;
use crate::error::StoreError;
use crate::open::Store;
use crate::turns::TurnId;

/// Turns per transaction: the recorder waits for the write lock at most one batch.
pub const BATCH_TURNS: usize = 500;

/// What [`Store::drop_turn_bodies`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct DroppedStats {
    /// Turns whose bodies were dropped.
    pub turns: u64,
    /// Stored parts deleted because no remaining turn referenced them.
    pub parts: u64,
    /// The bytes those bodies and parts took in their columns (compressed as stored).
    pub bytes: u64,
}

impl DroppedStats {
    fn add(&mut self, other: DroppedStats) {
        self.turns += other.turns;
        self.parts += other.parts;
        self.bytes += other.bytes;
    }
}

/// Which turns may lose their bodies.
#[derive(Debug, Clone, Default)]
pub struct DropRule {
    /// Turns created before this (Unix ms).
    pub before_ms: i64,
    /// Learning jobs that keep a per-session mark in `state` (`<job>.<session>` = the last
    /// `turn_index` read): a turn they would learn from (a successful main turn) waits until
    /// every one of them has read it.
    pub session_marks: Vec<String>,
    /// Jobs that keep one mark (`state` key = the last turn id read) over all turns: every
    /// turn waits for each of them.
    pub id_marks: Vec<String>,
    /// Turns created before this are dropped whether or not the jobs read them: a job that
    /// has not read a turn by then (off, or failing for days) is not waited for any more.
    pub stop_waiting_before_ms: i64,
    /// Turns per batch; 0 means [`BATCH_TURNS`]. Smaller batches stop closer to a target
    /// (a size limit checked between them).
    pub batch: usize,
}

impl Store {
    /// Drops the request and reply of turns created before `cutoff_ms`, waiting for no job.
    pub fn drop_turn_bodies_before(&mut self, cutoff_ms: i64) -> Result<DroppedStats, StoreError> {
        let rule = DropRule {
            before_ms: cutoff_ms,
            ..DropRule::default()
        };
        let mut total = DroppedStats::default();
        loop {
            let (batch, more) = self.drop_turn_bodies(&rule)?;
            total.add(batch);
            if !more {
                return Ok(total);
            }
        }
    }

    /// Drops the bodies of at most `rule.batch` turns `rule` allows, oldest first, in one
    /// transaction; `true` when more may be left. Callers loop, so a caller that must yield
    /// (a request arrived) stops between batches and keeps what it did. Turns already
    /// dropped are skipped; turns not yet converted to the v9 layout are dropped too.
    pub fn drop_turn_bodies(
        &mut self,
        rule: &DropRule,
    ) -> Result<(DroppedStats, bool), StoreError> {
        drop_batch(&mut self.conn, rule)
    }
}

/// How many turns keep their bodies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct BodyCounts {
    pub turns: u64,
    /// Turns whose request and reply are still stored.
    pub with_bodies: u64,
    /// When the oldest of those was recorded (Unix ms).
    pub oldest_with_body_ms: Option<i64>,
}

impl Store {
    /// Turns in all, those that keep their bodies, and the oldest of them. One pass over
    /// the turns.
    pub fn body_counts(&self) -> Result<BodyCounts, StoreError> {
        let (turns, with_bodies, oldest): (i64, Option<i64>, Option<i64>) = self.conn.query_row(
            "SELECT COUNT(*), SUM(request_body IS NOT ?1),
                    MIN(CASE WHEN request_body IS NOT ?1 THEN created_at_ms END)
             FROM turns",
            [encode_dropped()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        Ok(BodyCounts {
            turns: u64::try_from(turns).unwrap_or(0),
            with_bodies: with_bodies.and_then(|n| u64::try_from(n).ok()).unwrap_or(0),
            oldest_with_body_ms: oldest,
        })
    }
}

/// The `WHERE` clause of [`DropRule`]; `?1` before, `?2` the dropped body, `?3` the batch
/// size, `?4` stop waiting before. Mark keys are bound as parameters from `?5` on.
fn rule_sql(rule: &DropRule) -> String {
    let mut read = Vec::new();
    let mut n = 5;
    for _ in &rule.session_marks {
        read.push(format!(
            "(t.turn_type != 'main' OR t.status NOT BETWEEN 200 AND 299 OR t.error IS NOT NULL
              OR t.turn_index <= COALESCE((SELECT CAST(value AS INTEGER) FROM state
                                           WHERE key = ?{n} || '.' || t.session_id), -1))"
        ));
        n += 1;
    }
    for _ in &rule.id_marks {
        read.push(format!(
            "t.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state WHERE key = ?{n}), 0)"
        ));
        n += 1;
    }
    let waited = if read.is_empty() {
        String::new()
    } else {
        format!(" AND (t.created_at_ms < ?4 OR ({}))", read.join(" AND "))
    };
    format!(
        "SELECT t.id, octet_length(t.request_json) + COALESCE(octet_length(t.reply_json), 0),
                t.request_body, t.reply_body
         FROM turns t WHERE t.created_at_ms < ?1 AND t.request_body IS NOT ?2{waited}
         ORDER BY t.created_at_ms LIMIT ?3"
    )
}

/// A turn to drop: its id, the bytes of its legacy columns, its stored bodies.
type Row = (i64, i64, Option<Vec<u8>>, Option<Vec<u8>>);

/// One batch; `true` when more turns may be left.
fn drop_batch(conn: &mut Connection, rule: &DropRule) -> Result<(DroppedStats, bool), StoreError> {
    let dropped = encode_dropped();
    let batch = if rule.batch == 0 {
        BATCH_TURNS
    } else {
        rule.batch
    };
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut values: Vec<Value> = vec![
        rule.before_ms.into(),
        dropped.clone().into(),
        (batch as i64).into(),
    ];
    if !(rule.session_marks.is_empty() && rule.id_marks.is_empty()) {
        values.push(rule.stop_waiting_before_ms.into());
    }
    values.extend(
        rule.session_marks
            .iter()
            .chain(&rule.id_marks)
            .map(|k| Value::from(k.clone())),
    );
    let rows: Vec<Row> = tx
        .prepare_cached(&rule_sql(rule))?
        .query_map(params_from_iter(values), |r| {
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
    Ok((stats, rows.len() == batch))
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

    #[test]
    fn turns_wait_for_the_jobs_that_have_not_read_them_until_waiting_stops() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let mut failed = turn("a", 12, &["tried".into()]);
        failed.status = 500;
        store
            .insert_turns(&[
                turn("a", 10, &["one".into()]),
                turn("a", 11, &["two".into()]),
                failed,
                turn("b", 13, &["three".into()]),
            ])
            .unwrap();
        let kept = |store: &Store| -> Vec<String> {
            ["a", "b"]
                .iter()
                .flat_map(|s| store.session_turns(s).unwrap())
                .filter(|t| t.request_json != DROPPED_REQUEST_JSON)
                .map(|t| format!("{}{}", t.session_id, t.turn_index))
                .collect()
        };
        let mut rule = DropRule {
            before_ms: 100,
            session_marks: vec!["skills.evolved_through".into()],
            id_marks: vec!["effect.labelled_through".into()],
            stop_waiting_before_ms: 0,
            batch: 0,
        };
        // Nothing read yet: only the failed turn, which no job learns from, waits for the
        // labeller alone; it has not read it either.
        assert_eq!(store.drop_turn_bodies(&rule).unwrap().0.turns, 0);
        store.state_set("effect.labelled_through", "3").unwrap();
        assert_eq!(store.drop_turn_bodies(&rule).unwrap().0.turns, 1);
        assert_eq!(kept(&store), ["a0", "a1", "b0"]);
        // Evolution read `a` through its first turn.
        store.state_set("skills.evolved_through.a", "0").unwrap();
        store.drop_turn_bodies(&rule).unwrap();
        assert_eq!(kept(&store), ["a1", "b0"]);
        // `b0` was never labelled (id 4) and `a1` never learned from: kept until waiting stops.
        store.state_set("skills.evolved_through.b", "0").unwrap();
        store.drop_turn_bodies(&rule).unwrap();
        assert_eq!(kept(&store), ["a1", "b0"]);
        rule.stop_waiting_before_ms = 12;
        store.drop_turn_bodies(&rule).unwrap();
        assert_eq!(kept(&store), ["b0"]);
        let counts = store.body_counts().unwrap();
        assert_eq!(
            (counts.turns, counts.with_bodies, counts.oldest_with_body_ms),
            (4, 1, Some(13))
        );
        store.integrity_check().unwrap();
    }
}
