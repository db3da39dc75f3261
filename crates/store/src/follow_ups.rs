//! Schema v8: what followed each turn the user wrote (`effect::follow_up` in the engine): a
//! correction, the same request again, or the conversation going on. Labelled after the
//! fact, off the request path, in id order behind a mark in `state`.

use rusqlite::params;

use crate::error::StoreError;
use crate::open::Store;
use crate::turns::TurnId;

pub(crate) const V8_FOLLOW_UP: &str = "
ALTER TABLE turns ADD COLUMN follow_up TEXT NULL;
";

/// What followed the turns that carried one skill (or memory), and all main turns beside it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CarriedEffect {
    /// A skill name, or `memory:<id>`.
    pub item: String,
    /// Main turns whose block carried it.
    pub turns: u64,
    /// Their block's estimated tokens (the block is shared with what else it carried).
    pub block_tokens: u64,
    /// Of `turns`: those already followed by the user's next message, and how.
    pub labelled: u64,
    pub corrections: u64,
    pub repeats: u64,
    /// Of `turns`: those that failed (an error status).
    pub errors: u64,
}

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
            "SELECT id, session_id, status, request_json FROM turns
             WHERE id > ?1 AND turn_type = 'main' ORDER BY id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![after.0, limit as i64], label_turn)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The newest main turns of `session` before `before`, newest first, at most `limit`.
    pub fn main_turns_before(
        &self,
        session: &str,
        before: TurnId,
        limit: usize,
    ) -> Result<Vec<LabelTurn>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, session_id, status, request_json FROM turns
             WHERE session_id = ?1 AND id < ?2 AND turn_type = 'main'
             ORDER BY id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![session, before.0, limit as i64], label_turn)?;
        Ok(rows.collect::<Result<_, _>>()?)
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

    /// Per skill and memory carried by the main turns created since `from_ms`: how often,
    /// at what size, and what followed; most carried first. Also the same counts over every
    /// main turn of the window (`item` empty), the baseline a skill is compared with.
    pub fn carried_effects(
        &self,
        from_ms: i64,
    ) -> Result<(Vec<CarriedEffect>, CarriedEffect), StoreError> {
        const COUNTS: &str = "COUNT(*), COALESCE(SUM(t.block_tokens), 0),
             COALESCE(SUM(t.follow_up IS NOT NULL), 0),
             COALESCE(SUM(t.follow_up = 'correction'), 0),
             COALESCE(SUM(t.follow_up = 'repeat'), 0),
             COALESCE(SUM(t.status >= 400), 0)";
        let effect = |item: String, row: &rusqlite::Row<'_>, at: usize| {
            Ok(CarriedEffect {
                item,
                turns: row.get(at)?,
                block_tokens: row.get(at + 1)?,
                labelled: row.get(at + 2)?,
                corrections: row.get(at + 3)?,
                repeats: row.get(at + 4)?,
                errors: row.get(at + 5)?,
            })
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT j.value, {COUNTS}
             FROM turns t,
                  json_each(COALESCE(t.injected_skills, '[]')) j
             WHERE t.turn_type = 'main' AND t.created_at_ms >= ?1
             GROUP BY j.value
             UNION ALL
             SELECT 'memory:' || j.value, {COUNTS}
             FROM turns t,
                  json_each(COALESCE(t.injected_memories, '[]')) j
             WHERE t.turn_type = 'main' AND t.created_at_ms >= ?1
             GROUP BY j.value
             ORDER BY 2 DESC, 1"
        ))?;
        let items = stmt
            .query_map([from_ms], |row| effect(row.get(0)?, row, 1))?
            .collect::<Result<Vec<_>, _>>()?;
        let all = self.conn.query_row(
            &format!(
                "SELECT {COUNTS} FROM turns t WHERE t.turn_type = 'main' AND t.created_at_ms >= ?1"
            ),
            [from_ms],
            |row| effect(String::new(), row, 0),
        )?;
        Ok((items, all))
    }

    /// Writes each turn's label, in one transaction.
    pub fn set_follow_ups(&mut self, labels: &[(TurnId, &str)]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached("UPDATE turns SET follow_up = ?2 WHERE id = ?1")?;
            for (id, label) in labels {
                stmt.execute(params![id.0, label])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}

fn label_turn(row: &rusqlite::Row<'_>) -> rusqlite::Result<LabelTurn> {
    Ok(LabelTurn {
        id: TurnId(row.get(0)?),
        session_id: row.get(1)?,
        status: row.get(2)?,
        request_json: row.get(3)?,
    })
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
            scope: "default".into(),
            client_protocol: "openai".into(),
            upstream_protocol: "openai".into(),
            upstream: "primary".into(),
            model: "m".into(),
            request_json: format!(r#"{{"messages":[{{"role":"user","content":"{text}"}}]}}"#),
            reply_json: None,
            status: 200,
            error: None,
            input_tokens: None,
            output_tokens: None,
            cache_read_tokens: None,
            cache_write_tokens: None,
            overhead_ms: 0.0,
            ttft_ms: None,
            total_ms: 1.0,
            created_at_ms: 1,
            skill_generation: 0,
            injected_skills: Vec::new(),
            injected_memories: Vec::new(),
            injected_tokens: None,
            block_tokens: None,
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

    #[test]
    fn effects_are_counted_per_skill_and_memory_beside_every_main_turn() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let carrying = |skills: &[&str], memories: &[&str], status: u16| {
            let mut t = turn("a", "main", "x");
            t.injected_skills = skills.iter().map(|s| (*s).to_owned()).collect();
            t.injected_memories = memories.iter().map(|s| (*s).to_owned()).collect();
            t.block_tokens = Some(100);
            t.status = status;
            t
        };
        let ids = store
            .insert_turns(&[
                carrying(&["debug"], &["m1"], 200),
                carrying(&["debug", "git"], &[], 200),
                carrying(&[], &[], 500),
                carrying(&[], &[], 200),
            ])
            .unwrap();
        store
            .set_follow_ups(&[
                (ids[0], "correction"),
                (ids[1], "continues"),
                (ids[3], "repeat"),
            ])
            .unwrap();
        let (items, all) = store.carried_effects(0).unwrap();
        let names: Vec<&str> = items.iter().map(|e| e.item.as_str()).collect();
        assert_eq!(names, ["debug", "git", "memory:m1"]);
        assert_eq!(
            items[0],
            CarriedEffect {
                item: "debug".into(),
                turns: 2,
                block_tokens: 200,
                labelled: 2,
                corrections: 1,
                repeats: 0,
                errors: 0,
            }
        );
        assert_eq!(
            (
                all.turns,
                all.labelled,
                all.corrections,
                all.repeats,
                all.errors
            ),
            (4, 3, 1, 1, 1)
        );
        assert!(
            store.carried_effects(2).unwrap().0.is_empty(),
            "outside the window"
        );
    }
}
