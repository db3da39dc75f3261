//! Schema v8: what followed each turn the user wrote (`effect::follow_up` in the engine): a
//! correction, the same request again, thanks, or the conversation going on. Labelled after the
//! fact, off the request path, in id order behind a mark in `state`. Also which turns and
//! training samples were held out from MetaClaw's block (`learning.holdout`), and which
//! skills and memories a sample's turn carried, so judge scores can be compared the same way.

use rusqlite::{TransactionBehavior, params};

use crate::body_parts::Rebuilder;
use crate::error::StoreError;
use crate::open::Store;
use crate::turns::TurnId;

pub(crate) const V8_FOLLOW_UP: &str = "
ALTER TABLE turns ADD COLUMN follow_up TEXT NULL;
ALTER TABLE turns ADD COLUMN held_out INTEGER NOT NULL DEFAULT 0;
ALTER TABLE learn_samples ADD COLUMN carried TEXT NULL;
ALTER TABLE learn_samples ADD COLUMN held_out INTEGER NOT NULL DEFAULT 0;
";

/// A main turn to label, with its forwarded request (the user's words are read from it).
#[derive(Debug, Clone, PartialEq)]
pub struct LabelTurn {
    pub id: TurnId,
    pub session_id: String,
    pub status: u16,
    pub request_json: String,
}

impl Store {
    /// Main turns with an id above `after`, oldest first, at most `limit`.
    pub fn main_turns_after(
        &self,
        after: TurnId,
        limit: usize,
    ) -> Result<Vec<LabelTurn>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, session_id, status, request_json, request_body FROM turns
             WHERE id > ?1 AND turn_type = 'main' ORDER BY id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![after.0, limit as i64], label_turn)?;
        self.with_label_requests(rows.collect::<Result<_, _>>()?)
    }

    /// The newest main turns of `session` before `before`, newest first, at most `limit`.
    pub fn main_turns_before(
        &self,
        session: &str,
        before: TurnId,
        limit: usize,
    ) -> Result<Vec<LabelTurn>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, session_id, status, request_json, request_body FROM turns
             WHERE session_id = ?1 AND id < ?2 AND turn_type = 'main'
             ORDER BY id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![session, before.0, limit as i64], label_turn)?;
        self.with_label_requests(rows.collect::<Result<_, _>>()?)
    }

    /// The label of one turn, if it has one.
    pub fn follow_up_of(&self, id: TurnId) -> Result<Option<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT follow_up FROM turns WHERE id = ?1")?;
        let mut rows = stmt.query([id.0])?;
        match rows.next()? {
            Some(row) => Ok(row.get(0)?),
            None => Ok(None),
        }
    }

    /// Writes each turn's label, in one transaction.
    pub fn set_follow_ups(&mut self, labels: &[(TurnId, &str)]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut stmt = tx.prepare_cached("UPDATE turns SET follow_up = ?2 WHERE id = ?1")?;
            for (id, label) in labels {
                stmt.execute(params![id.0, label])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn with_label_requests(
        &self,
        rows: Vec<(LabelTurn, Option<Vec<u8>>)>,
    ) -> Result<Vec<LabelTurn>, StoreError> {
        let mut rebuilder = Rebuilder::new(&self.conn);
        rows.into_iter()
            .map(|(mut turn, body)| {
                let request_json = std::mem::take(&mut turn.request_json);
                turn.request_json = rebuilder.request(turn.id, request_json, body)?;
                Ok(turn)
            })
            .collect()
    }
}

/// A row as stored, its request to be rebuilt from `request_body` (see `turns::turn_row`).
fn label_turn(row: &rusqlite::Row<'_>) -> rusqlite::Result<(LabelTurn, Option<Vec<u8>>)> {
    let turn = LabelTurn {
        id: TurnId(row.get(0)?),
        session_id: row.get(1)?,
        status: row.get(2)?,
        request_json: row.get(3)?,
    };
    Ok((turn, row.get(4)?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::NewTurn;

    fn turn(session: &str, kind: &str, text: &str) -> NewTurn {
        NewTurn {
            session_id: session.into(),
            turn_type: kind.into(),
            request_json: format!(r#"{{"messages":[{{"role":"user","content":"{text}"}}]}}"#),
            status: 200,
            created_at_ms: 1,
            ..NewTurn::default()
        }
    }

    #[test]
    fn main_turns_are_paged_in_id_order_and_labels_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let ids = store
            .insert_turns(&[
                turn("a", "main", "one"),
                turn("a", "side", "title"),
                turn("b", "main", "two"),
                turn("a", "main", "three"),
            ])
            .unwrap();
        let page = store.main_turns_after(TurnId(0), 2).unwrap();
        assert_eq!(
            page.iter().map(|t| t.id).collect::<Vec<_>>(),
            [ids[0], ids[2]]
        );
        let rest = store.main_turns_after(ids[2], 10).unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].session_id, "a");
        let before = store.main_turns_before("a", ids[3], 5).unwrap();
        assert_eq!(before.iter().map(|t| t.id).collect::<Vec<_>>(), [ids[0]]);

        store.set_follow_ups(&[(ids[0], "correction")]).unwrap();
        let label: Option<String> = store
            .conn
            .query_row(
                "SELECT follow_up FROM turns WHERE id = ?1",
                [ids[0].0],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(label.as_deref(), Some("correction"));
    }
}
