//! What followed the main turns of a window, per skill and memory their block carried, per
//! holdout arm, and over all of them: how many, at what block size, how the user's next
//! message took the answer (`turns.follow_up`), errors, and judge scores where weight
//! learning scored the turn's sample. Read in a few SQL passes (`json_each` over the JSON
//! lists), never on the request path.

use std::collections::HashMap;

use crate::error::StoreError;
use crate::open::Store;

/// Outcomes of a set of main turns.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Outcome {
    pub turns: u64,
    /// The estimated tokens of the block these turns carried (shared with what else it held).
    pub block_tokens: u64,
    /// Turns already followed by the user's next message, and how (an agent's retry is not
    /// the user answering: it is counted in `retries`, not here).
    pub labelled: u64,
    pub corrections: u64,
    pub repeats: u64,
    /// The user said it worked ("thanks", "perfect").
    pub thanks: u64,
    /// Turns the agent sent again unchanged (a retry after an error or a timeout).
    pub retries: u64,
    /// Turns that failed (an error status).
    pub errors: u64,
    /// Turns whose training sample the judge scored (modes `rl` and `madmax`), and the mean.
    pub judged: u64,
    pub mean_reward: Option<f64>,
}

/// The outcomes of the turns whose block carried one skill or memory.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CarriedEffect {
    /// A skill name, or `memory:<id>`.
    pub item: String,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The outcomes of turns served with MetaClaw's block and of held-out sessions.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct HoldoutArms {
    pub with: Outcome,
    pub with_sessions: u64,
    pub without: Outcome,
    pub without_sessions: u64,
}

const COUNTS: &str = "COUNT(*), COALESCE(SUM(t.block_tokens), 0),
     COALESCE(SUM(t.follow_up IS NOT NULL AND t.follow_up != 'retry'), 0),
     COALESCE(SUM(t.follow_up = 'correction'), 0),
     COALESCE(SUM(t.follow_up = 'repeat'), 0),
     COALESCE(SUM(t.follow_up = 'thanks'), 0),
     COALESCE(SUM(t.follow_up = 'retry'), 0),
     COALESCE(SUM(t.status >= 400), 0)";

const JUDGED: &str = "COUNT(*), AVG(s.reward)";

fn outcome(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Outcome> {
    Ok(Outcome {
        turns: row.get(at)?,
        block_tokens: row.get(at + 1)?,
        labelled: row.get(at + 2)?,
        corrections: row.get(at + 3)?,
        repeats: row.get(at + 4)?,
        thanks: row.get(at + 5)?,
        retries: row.get(at + 6)?,
        errors: row.get(at + 7)?,
        judged: 0,
        mean_reward: None,
    })
}

fn judged(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<(u64, Option<f64>)> {
    Ok((row.get(at)?, row.get(at + 1)?))
}

impl Store {
    /// Per skill and memory carried by the main turns created since `from_ms`, most
    /// carried first; and every main turn of the window, the baseline they are compared with.
    pub fn carried_effects(
        &self,
        from_ms: i64,
    ) -> Result<(Vec<CarriedEffect>, Outcome), StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT j.value, {COUNTS}
             FROM turns t, json_each(COALESCE(t.injected_skills, '[]')) j
             WHERE t.turn_type = 'main' AND t.created_at_ms >= ?1
             GROUP BY j.value
             UNION ALL
             SELECT 'memory:' || j.value, {COUNTS}
             FROM turns t, json_each(COALESCE(t.injected_memories, '[]')) j
             WHERE t.turn_type = 'main' AND t.created_at_ms >= ?1
             GROUP BY j.value
             ORDER BY 2 DESC, 1"
        ))?;
        let mut items = stmt
            .query_map([from_ms], |row| {
                Ok(CarriedEffect {
                    item: row.get(0)?,
                    outcome: outcome(row, 1)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        // Samples carry skills and `memory:<id>`s in one list, as the block does.
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT j.value, {JUDGED}
             FROM learn_samples s, json_each(COALESCE(s.carried, '[]')) j
             WHERE s.judge_state = 'scored' AND s.created_at_ms >= ?1
             GROUP BY j.value"
        ))?;
        let scores: HashMap<String, (u64, Option<f64>)> = stmt
            .query_map([from_ms], |row| Ok((row.get(0)?, judged(row, 1)?)))?
            .collect::<Result<_, _>>()?;
        for item in &mut items {
            if let Some(&(n, mean)) = scores.get(&item.item) {
                (item.outcome.judged, item.outcome.mean_reward) = (n, mean);
            }
        }
        let mut all = self.conn.query_row(
            &format!(
                "SELECT {COUNTS} FROM turns t
                 WHERE t.turn_type = 'main' AND t.created_at_ms >= ?1"
            ),
            [from_ms],
            |row| outcome(row, 0),
        )?;
        (all.judged, all.mean_reward) = self.conn.query_row(
            &format!(
                "SELECT {JUDGED} FROM learn_samples s
                 WHERE s.judge_state = 'scored' AND s.created_at_ms >= ?1"
            ),
            [from_ms],
            |row| judged(row, 0),
        )?;
        Ok((items, all))
    }

    /// The main turns since `from_ms` served with MetaClaw's block and those of held-out
    /// sessions, with how many sessions each arm had.
    pub fn holdout_arms(&self, from_ms: i64) -> Result<HoldoutArms, StoreError> {
        let mut arms = HoldoutArms::default();
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT t.held_out, COUNT(DISTINCT t.session_id), {COUNTS} FROM turns t
             WHERE t.turn_type = 'main' AND t.created_at_ms >= ?1
             GROUP BY t.held_out"
        ))?;
        let rows = stmt.query_map([from_ms], |row| {
            Ok((
                row.get::<_, bool>(0)?,
                row.get::<_, u64>(1)?,
                outcome(row, 2)?,
            ))
        })?;
        for row in rows {
            let (held_out, sessions, outcome) = row?;
            if held_out {
                (arms.without, arms.without_sessions) = (outcome, sessions);
            } else {
                (arms.with, arms.with_sessions) = (outcome, sessions);
            }
        }
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT s.held_out, {JUDGED} FROM learn_samples s
             WHERE s.judge_state = 'scored' AND s.created_at_ms >= ?1
             GROUP BY s.held_out"
        ))?;
        let rows = stmt.query_map([from_ms], |row| {
            Ok((row.get::<_, bool>(0)?, judged(row, 1)?))
        })?;
        for row in rows {
            let (held_out, (n, mean)) = row?;
            let arm = if held_out {
                &mut arms.without
            } else {
                &mut arms.with
            };
            (arm.judged, arm.mean_reward) = (n, mean);
        }
        Ok(arms)
    }

    /// The main turns created in `[from_ms, to_ms)` whose block carried the skill `name`:
    /// what followed the turns served while one version of it was in the library.
    pub fn carried_between(
        &self,
        name: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Outcome, StoreError> {
        Ok(self.conn.query_row(
            &format!(
                "SELECT {COUNTS} FROM turns t
                 WHERE t.turn_type = 'main' AND t.created_at_ms >= ?2 AND t.created_at_ms < ?3
                   AND EXISTS (SELECT 1 FROM json_each(COALESCE(t.injected_skills, '[]')) j
                               WHERE j.value = ?1)"
            ),
            rusqlite::params![name, from_ms, to_ms],
            |row| outcome(row, 0),
        )?)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::{NewSample, NewTurn, TurnId};

    fn turn(session: &str, skills: &[&str], memories: &[&str], status: u16) -> NewTurn {
        NewTurn {
            session_id: session.into(),
            turn_type: "main".into(),
            request_json: "{}".into(),
            created_at_ms: 1,
            injected_skills: skills.iter().map(|s| (*s).to_owned()).collect(),
            injected_memories: memories.iter().map(|s| (*s).to_owned()).collect(),
            block_tokens: Some(100),
            status,
            ..NewTurn::default()
        }
    }

    fn scored(store: &mut Store, carried: &[&str], held_out: bool, reward: f64) {
        let id = store
            .insert_sample(&NewSample {
                session_id: "a".into(),
                turn_index: 0,
                skill_generation: 0,
                prompt_tokens: vec![1],
                completion_tokens: vec![2],
                completion_logprobs: vec![-0.5],
                sampler_path: None,
                instruction: "q".into(),
                response_text: "r".into(),
                created_at_ms: 1,
                carried: carried.iter().map(|s| (*s).to_owned()).collect(),
                held_out,
            })
            .unwrap();
        store.set_sample_score(id, reward, &[Some(1)]).unwrap();
    }

    fn labels(store: &mut Store, labels: &[(TurnId, &str)]) {
        store.set_follow_ups(labels).unwrap();
    }

    #[test]
    fn carried_between_counts_one_skills_turns_in_a_window() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let turns: Vec<NewTurn> = [
            (10, &["brew"][..]),
            (20, &["brew", "x"]),
            (30, &["x"]),
            (40, &["brew"]),
        ]
        .into_iter()
        .map(|(at, skills)| NewTurn {
            created_at_ms: at,
            ..turn("a", skills, &[], 200)
        })
        .collect();
        store.insert_turns(&turns).unwrap();
        assert_eq!(store.carried_between("brew", 10, 40).unwrap().turns, 2);
        assert_eq!(store.carried_between("brew", 0, 100).unwrap().turns, 3);
        assert_eq!(store.carried_between("x", 25, 100).unwrap().turns, 1);
        assert_eq!(store.carried_between("none", 0, 100).unwrap().turns, 0);
    }

    #[test]
    fn effects_are_counted_per_skill_and_memory_beside_every_main_turn() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let ids = store
            .insert_turns(&[
                turn("a", &["debug"], &["m1"], 200),
                turn("a", &["debug", "git"], &[], 200),
                turn("a", &[], &[], 500),
                turn("a", &[], &[], 200),
            ])
            .unwrap();
        labels(
            &mut store,
            &[
                (ids[0], "correction"),
                (ids[1], "thanks"),
                (ids[2], "retry"),
                (ids[3], "repeat"),
            ],
        );
        scored(&mut store, &["debug", "memory:m1"], false, 1.0);
        scored(&mut store, &["debug"], false, 0.0);
        scored(&mut store, &[], true, -1.0);
        let (items, all) = store.carried_effects(0).unwrap();
        let names: Vec<&str> = items.iter().map(|e| e.item.as_str()).collect();
        assert_eq!(names, ["debug", "git", "memory:m1"]);
        assert_eq!(
            items[0].outcome,
            Outcome {
                turns: 2,
                block_tokens: 200,
                labelled: 2,
                corrections: 1,
                repeats: 0,
                thanks: 1,
                retries: 0,
                errors: 0,
                judged: 2,
                mean_reward: Some(0.5),
            }
        );
        assert_eq!(
            (items[1].outcome.judged, items[1].outcome.mean_reward),
            (0, None)
        );
        assert_eq!(items[2].outcome.judged, 1);
        assert_eq!(
            (
                all.turns,
                all.labelled,
                all.corrections,
                all.repeats,
                all.retries,
                all.errors
            ),
            (4, 3, 1, 1, 1, 1)
        );
        assert_eq!(all.judged, 3);
        assert!(
            store.carried_effects(2).unwrap().0.is_empty(),
            "outside the window"
        );
    }

    #[test]
    fn held_out_sessions_are_counted_apart_with_their_judge_scores() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let held = |session: &str| {
            let mut t = turn(session, &[], &[], 200);
            t.held_out = true;
            t.block_tokens = Some(0);
            t
        };
        let (h1, h2) = (held("h1"), held("h2"));
        let ids = store
            .insert_turns(&[
                turn("a", &["debug"], &[], 200),
                turn("a", &[], &[], 200),
                h1,
                h2,
            ])
            .unwrap();
        labels(
            &mut store,
            &[
                (ids[0], "continues"),
                (ids[2], "correction"),
                (ids[3], "repeat"),
            ],
        );
        scored(&mut store, &["debug"], false, 0.8);
        scored(&mut store, &[], true, 0.2);
        scored(&mut store, &[], true, 0.4);
        let arms = store.holdout_arms(0).unwrap();
        assert_eq!((arms.with_sessions, arms.without_sessions), (1, 2));
        assert_eq!(
            (arms.with.turns, arms.with.labelled, arms.with.corrections),
            (2, 1, 0)
        );
        assert_eq!(
            (
                arms.without.turns,
                arms.without.labelled,
                arms.without.corrections,
                arms.without.repeats
            ),
            (2, 2, 1, 1)
        );
        assert_eq!((arms.with.judged, arms.with.mean_reward), (1, Some(0.8)));
        assert_eq!(arms.without.judged, 2);
        assert!((arms.without.mean_reward.unwrap() - 0.3).abs() < 1e-9);
        assert_eq!(store.holdout_arms(2).unwrap(), HoldoutArms::default());
    }
}
