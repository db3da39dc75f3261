//! Training samples of weight learning: the exact tokens the sampler produced, their
//! judgement, and which training step consumed them.

use rusqlite::{OptionalExtension, Row, TransactionBehavior, params};
use serde::Serialize;

use crate::error::StoreError;
use crate::open::Store;

/// A sampled main turn to keep for training.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSample {
    pub session_id: String,
    pub turn_index: i64,
    pub skill_generation: i64,
    /// The prompt ids sent to the sampler.
    pub prompt_tokens: Vec<u32>,
    /// The sampled ids, exactly as returned.
    pub completion_tokens: Vec<u32>,
    /// The sampler's logprob of each sampled id.
    pub completion_logprobs: Vec<f32>,
    /// The weights that produced it.
    pub sampler_path: Option<String>,
    /// What the judge is shown: the newest user message and the reply's text.
    pub instruction: String,
    pub response_text: String,
    pub created_at_ms: i64,
    /// The skills and `memory:<id>`s the turn's block carried, for the judge score per item.
    pub carried: Vec<String>,
    /// The session was held out from MetaClaw's block (`learning.holdout`).
    pub held_out: bool,
}

/// Where the judge is with a sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JudgeState {
    Pending,
    /// `votes` holds each vote (`None` = the reply had no readable score).
    Scored {
        reward: f64,
        votes: Vec<Option<i8>>,
    },
    /// The judge failed `attempts` times; retried later.
    Held {
        error: String,
        attempts: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SampleStatus {
    Waiting,
    Consumed {
        step: i64,
    },
    /// Its skill generation became stale before it was trained on.
    Dropped,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SampleRow {
    pub id: i64,
    pub session_id: String,
    pub turn_index: i64,
    pub skill_generation: i64,
    pub prompt_tokens: Vec<u32>,
    pub completion_tokens: Vec<u32>,
    pub completion_logprobs: Vec<f32>,
    pub sampler_path: Option<String>,
    pub instruction: String,
    pub response_text: String,
    /// The turn that followed (the judge's evidence), once seen.
    pub next_state: Option<String>,
    /// The teacher's logprob of each sampled id (on-policy distillation), once known.
    pub teacher_logprobs: Option<Vec<f32>>,
    pub judge: JudgeState,
    pub status: SampleStatus,
    pub created_at_ms: i64,
}

impl SampleRow {
    /// The judge's reward, if scored.
    pub fn reward(&self) -> Option<f64> {
        match self.judge {
            JudgeState::Scored { reward, .. } => Some(reward),
            _ => None,
        }
    }
}

/// The result of [`Store::take_sample_batch`].
#[derive(Debug, Clone, PartialEq)]
pub struct BatchTake {
    /// Oldest first.
    pub samples: Vec<SampleRow>,
    /// Waiting samples of older skill generations marked dropped by this call.
    pub dropped: u64,
}

/// Sample totals for status displays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SampleCounts {
    pub waiting: u64,
    /// Waiting and not yet scored (pending or held).
    pub unjudged: u64,
    pub held: u64,
    pub consumed: u64,
    pub dropped: u64,
}

const COLUMNS: &str = "id, session_id, turn_index, skill_generation, prompt_tokens,
    completion_tokens, completion_logprobs, sampler_path, instruction, response_text,
    next_state, teacher_logprobs, judge_state, reward, votes, judge_error, judge_attempts,
    status, consumed_by_step, created_at_ms";

impl Store {
    /// Stores a sample; returns its id. Refuses a sample whose completion has no tokens or
    /// whose logprobs do not match its tokens one to one.
    pub fn insert_sample(&mut self, s: &NewSample) -> Result<i64, StoreError> {
        check_sample(s)?;
        self.conn
            .prepare_cached(
                "INSERT INTO learn_samples (session_id, turn_index, skill_generation,
                     prompt_tokens, completion_tokens, completion_logprobs, sampler_path,
                     instruction, response_text, created_at_ms, carried, held_out)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )?
            .execute(params![
                s.session_id,
                s.turn_index,
                s.skill_generation,
                u32_blob(&s.prompt_tokens),
                u32_blob(&s.completion_tokens),
                f32_blob(&s.completion_logprobs),
                s.sampler_path,
                s.instruction,
                s.response_text,
                s.created_at_ms,
                crate::turns::skills_json(&s.carried),
                s.held_out,
            ])?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn sample(&self, id: i64) -> Result<Option<SampleRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM learn_samples WHERE id = ?1");
        Ok(self
            .conn
            .prepare_cached(&sql)?
            .query_row([id], sample_row)
            .optional()?)
    }

    /// The last sample stored for a turn of `session_id` (to attach the next turn to it).
    pub fn last_sample_of_session(&self, session_id: &str) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT id FROM learn_samples WHERE session_id = ?1
                 ORDER BY turn_index DESC, id DESC LIMIT 1",
            )?
            .query_row([session_id], |r| r.get(0))
            .optional()?)
    }

    /// Records the turn that followed the sample: the judge's evidence.
    pub fn set_sample_next_state(&mut self, id: i64, next_state: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("UPDATE learn_samples SET next_state = ?2 WHERE id = ?1")?
            .execute(params![id, next_state])?;
        Ok(())
    }

    /// The session ended: its samples still waiting for a follow-up get an empty one, so
    /// the judge scores them on the turn alone instead of leaving them unjudged forever.
    /// Returns how many.
    pub fn end_sample_session(&mut self, session_id: &str) -> Result<usize, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "UPDATE learn_samples SET next_state = ''
                 WHERE session_id = ?1 AND next_state IS NULL AND status = 'waiting'",
            )?
            .execute([session_id])?)
    }

    /// Records the teacher's logprobs of the sampled tokens (one per completion token).
    pub fn set_sample_teacher_logprobs(
        &mut self,
        id: i64,
        logprobs: &[f32],
    ) -> Result<(), StoreError> {
        let expected: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT completion_tokens FROM learn_samples WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        let Some(tokens) = expected else {
            return Err(invalid("sample", format!("no sample {id}")));
        };
        if tokens.len() / 4 != logprobs.len() {
            return Err(invalid(
                "teacher logprobs",
                format!(
                    "{} values for {} completion tokens",
                    logprobs.len(),
                    tokens.len() / 4
                ),
            ));
        }
        self.conn
            .prepare_cached("UPDATE learn_samples SET teacher_logprobs = ?2 WHERE id = ?1")?
            .execute(params![id, f32_blob(logprobs)])?;
        Ok(())
    }

    /// Waiting samples the judge can score now: evidence seen, not scored, and (if held)
    /// due for a retry. Oldest first.
    pub fn samples_to_judge(&self, now_ms: i64, limit: u32) -> Result<Vec<SampleRow>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM learn_samples
             WHERE status = 'waiting' AND judge_state IN ('pending', 'held')
               AND next_state IS NOT NULL AND judge_next_at_ms <= ?1
             ORDER BY id LIMIT ?2"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![now_ms, limit], sample_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Waiting samples the distillation teacher has not scored yet, oldest first.
    pub fn samples_without_teacher(&self, limit: u32) -> Result<Vec<SampleRow>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM learn_samples
             WHERE status = 'waiting' AND teacher_logprobs IS NULL
             ORDER BY id LIMIT ?1"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([limit], sample_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Persists the judge's verdict.
    pub fn set_sample_score(
        &mut self,
        id: i64,
        reward: f64,
        votes: &[Option<i8>],
    ) -> Result<(), StoreError> {
        let votes = serde_json::to_string(votes).unwrap_or_else(|_| "[]".to_owned());
        self.conn
            .prepare_cached(
                "UPDATE learn_samples SET judge_state = 'scored', reward = ?2, votes = ?3,
                     judge_error = NULL WHERE id = ?1",
            )?
            .execute(params![id, reward, votes])?;
        Ok(())
    }

    /// Holds a sample the judge failed on, to retry from `retry_at_ms`; returns the number
    /// of failed attempts so far.
    pub fn hold_sample(
        &mut self,
        id: i64,
        error: &str,
        retry_at_ms: i64,
    ) -> Result<u32, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "UPDATE learn_samples SET judge_state = 'held', judge_error = ?2,
                     judge_attempts = judge_attempts + 1, judge_next_at_ms = ?3
                 WHERE id = ?1 RETURNING judge_attempts",
            )?
            .query_row(params![id, error, retry_at_ms], |r| r.get(0))?)
    }

    /// In one transaction: marks waiting samples older than `generation` dropped, then
    /// returns up to `limit` waiting samples of `generation`, oldest first (only scored ones
    /// when `scored_only`). Nothing is consumed: see [`Store::mark_samples_consumed`].
    pub fn take_sample_batch(
        &mut self,
        generation: i64,
        limit: u32,
        scored_only: bool,
    ) -> Result<BatchTake, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let dropped = tx
            .prepare_cached(
                "UPDATE learn_samples SET status = 'dropped'
                 WHERE status = 'waiting' AND skill_generation < ?1",
            )?
            .execute([generation])?;
        let sql = format!(
            "SELECT {COLUMNS} FROM learn_samples
             WHERE status = 'waiting' AND skill_generation = ?1
               AND (?3 = 0 OR judge_state = 'scored')
             ORDER BY id LIMIT ?2"
        );
        let samples = {
            let mut stmt = tx.prepare_cached(&sql)?;
            let rows = stmt.query_map(params![generation, limit, scored_only], sample_row)?;
            rows.collect::<Result<Vec<_>, _>>()?
        };
        tx.commit()?;
        Ok(BatchTake {
            samples,
            dropped: dropped as u64,
        })
    }

    /// Marks the given waiting samples consumed by `step`, all or none; returns how many.
    pub fn mark_samples_consumed(&mut self, ids: &[i64], step: i64) -> Result<usize, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let n = consume(&tx, ids, step)?;
        tx.commit()?;
        Ok(n)
    }

    /// Marks the batch consumed by `step.step` and records the step, in one transaction: a
    /// step's samples and its row exist together or not at all, so a stop before the new
    /// weights are saved can neither lose the step nor reuse its number.
    pub fn record_consumed_step(
        &mut self,
        ids: &[i64],
        step: &crate::NewLearningStep,
    ) -> Result<usize, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let n = consume(&tx, ids, step.step)?;
        crate::learning_steps::insert(&tx, step)?;
        tx.commit()?;
        Ok(n)
    }

    pub fn sample_counts(&self) -> Result<SampleCounts, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT
                 COALESCE(SUM(status = 'waiting'), 0),
                 COALESCE(SUM(status = 'waiting' AND judge_state != 'scored'), 0),
                 COALESCE(SUM(status = 'waiting' AND judge_state = 'held'), 0),
                 COALESCE(SUM(status = 'consumed'), 0),
                 COALESCE(SUM(status = 'dropped'), 0)
             FROM learn_samples",
            )?
            .query_row([], |r| {
                Ok(SampleCounts {
                    waiting: r.get(0)?,
                    unjudged: r.get(1)?,
                    held: r.get(2)?,
                    consumed: r.get(3)?,
                    dropped: r.get(4)?,
                })
            })?)
    }
}

fn invalid(what: &'static str, detail: String) -> StoreError {
    StoreError::Invalid { what, detail }
}

fn check_sample(s: &NewSample) -> Result<(), StoreError> {
    if s.completion_tokens.is_empty() {
        return Err(invalid("sample", "the completion has no tokens".to_owned()));
    }
    if s.completion_tokens.len() != s.completion_logprobs.len() {
        return Err(invalid(
            "sample",
            format!(
                "{} completion tokens but {} logprobs; they must match one to one",
                s.completion_tokens.len(),
                s.completion_logprobs.len()
            ),
        ));
    }
    if s.completion_logprobs.iter().any(|v| !v.is_finite()) {
        return Err(invalid("sample", "a logprob is not finite".to_owned()));
    }
    Ok(())
}

fn u32_blob(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn blob_u32(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn blob_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn sample_row(r: &Row<'_>) -> rusqlite::Result<SampleRow> {
    let judge = match r.get::<_, String>(12)?.as_str() {
        "scored" => JudgeState::Scored {
            reward: r.get::<_, Option<f64>>(13)?.unwrap_or(0.0),
            votes: r
                .get::<_, Option<String>>(14)?
                .and_then(|v| serde_json::from_str(&v).ok())
                .unwrap_or_default(),
        },
        "held" => JudgeState::Held {
            error: r.get::<_, Option<String>>(15)?.unwrap_or_default(),
            attempts: r.get(16)?,
        },
        _ => JudgeState::Pending,
    };
    let status = match r.get::<_, String>(17)?.as_str() {
        "consumed" => SampleStatus::Consumed {
            step: r.get::<_, Option<i64>>(18)?.unwrap_or(0),
        },
        "dropped" => SampleStatus::Dropped,
        _ => SampleStatus::Waiting,
    };
    Ok(SampleRow {
        id: r.get(0)?,
        session_id: r.get(1)?,
        turn_index: r.get(2)?,
        skill_generation: r.get(3)?,
        prompt_tokens: blob_u32(&r.get::<_, Vec<u8>>(4)?),
        completion_tokens: blob_u32(&r.get::<_, Vec<u8>>(5)?),
        completion_logprobs: blob_f32(&r.get::<_, Vec<u8>>(6)?),
        sampler_path: r.get(7)?,
        instruction: r.get(8)?,
        response_text: r.get(9)?,
        next_state: r.get(10)?,
        teacher_logprobs: r.get::<_, Option<Vec<u8>>>(11)?.map(|b| blob_f32(&b)),
        judge,
        status,
        created_at_ms: r.get(19)?,
    })
}

/// Marks `ids` consumed by `step` inside `tx`; every one must still be waiting.
fn consume(tx: &rusqlite::Transaction<'_>, ids: &[i64], step: i64) -> Result<usize, StoreError> {
    let mut n = 0;
    let mut stmt = tx.prepare_cached(
        "UPDATE learn_samples SET status = 'consumed', consumed_by_step = ?2
         WHERE id = ?1 AND status = 'waiting'",
    )?;
    for id in ids {
        n += stmt.execute(params![id, step])?;
    }
    if n != ids.len() {
        return Err(invalid(
            "batch",
            format!(
                "{} of {} samples were no longer waiting",
                ids.len() - n,
                ids.len()
            ),
        ));
    }
    Ok(n)
}
