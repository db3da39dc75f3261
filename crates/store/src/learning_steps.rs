//! Completed training steps: metrics for the learning dashboard, the step counter and the
//! latest checkpoint after a restart.

use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use crate::error::StoreError;
use crate::open::Store;

/// A training step whose optimizer step was applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewLearningStep {
    pub step: i64,
    pub at_ms: i64,
    pub samples: u64,
    /// Stale-generation samples dropped while taking the batch.
    pub dropped: u64,
    pub mean_reward: f64,
    /// The loss the backend reported, if any.
    pub loss: Option<f64>,
    pub duration_ms: u64,
    /// The weights the new sampler serves (`None` if saving them failed).
    pub sampler_path: Option<String>,
    /// The full training state saved after this step, if one was.
    pub checkpoint_path: Option<String>,
    /// What failed after the optimizer step (saving for the sampler, the checkpoint).
    pub error: Option<String>,
}

pub type LearningStepRow = NewLearningStep;

/// What is known about a step once its weights were saved for sampling (or that failed).
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedStep {
    pub step: i64,
    pub duration_ms: u64,
    pub sampler_path: Option<String>,
    pub checkpoint_path: Option<String>,
    pub error: Option<String>,
}

const COLUMNS: &str =
    "step, at_ms, samples, dropped, mean_reward, loss, duration_ms, sampler_path, checkpoint_path,
     error";

impl Store {
    /// Completes a step's row once its weights were saved for sampling (or that failed).
    pub fn finish_learning_step(&mut self, done: &FinishedStep) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "UPDATE learning_steps SET duration_ms = ?2, sampler_path = ?3,
                 checkpoint_path = ?4, error = ?5 WHERE step = ?1",
            )?
            .execute(params![
                done.step,
                done.duration_ms,
                done.sampler_path,
                done.checkpoint_path,
                done.error,
            ])?;
        Ok(())
    }

    /// The newest `limit` steps, newest first.
    pub fn learning_steps(&self, limit: u32) -> Result<Vec<LearningStepRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM learning_steps ORDER BY step DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map([limit], step_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The number of the last completed step (0 when none).
    pub fn last_learning_step(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT COALESCE(MAX(step), 0) FROM learning_steps")?
            .query_row([], |r| r.get(0))?)
    }

    /// The newest saved training state, if any.
    pub fn latest_checkpoint(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT checkpoint_path FROM learning_steps WHERE checkpoint_path IS NOT NULL
                 ORDER BY step DESC LIMIT 1",
            )?
            .query_row([], |r| r.get(0))
            .optional()?)
    }
}

fn step_row(r: &Row<'_>) -> rusqlite::Result<LearningStepRow> {
    Ok(NewLearningStep {
        step: r.get(0)?,
        at_ms: r.get(1)?,
        samples: r.get(2)?,
        dropped: r.get(3)?,
        mean_reward: r.get(4)?,
        loss: r.get(5)?,
        duration_ms: r.get(6)?,
        sampler_path: r.get(7)?,
        checkpoint_path: r.get(8)?,
        error: r.get(9)?,
    })
}

/// Inserts a step's row (inside a caller's transaction, or on the connection).
pub(crate) fn insert(conn: &rusqlite::Connection, s: &NewLearningStep) -> Result<(), StoreError> {
    conn.prepare_cached(&format!(
        "INSERT INTO learning_steps ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
    ))?
    .execute(params![
        s.step,
        s.at_ms,
        s.samples,
        s.dropped,
        s.mean_reward,
        s.loss,
        s.duration_ms,
        s.sampler_path,
        s.checkpoint_path,
        s.error,
    ])?;
    Ok(())
}
