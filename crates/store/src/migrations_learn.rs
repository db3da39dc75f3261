//! Schema of weight learning (crate `metaclaw-learn` drives it through [`crate::samples`]
//! and [`crate::learning_steps`]).
//!
//! - `learn_samples`: one row per sampled main turn. Token ids are little-endian `u32`
//!   blobs and logprobs little-endian `f32` blobs, exactly as the sampler returned them, so
//!   training never re-tokenises. `judge_state` is `pending`, `scored` (reward + votes) or
//!   `held` (the judge failed; `judge_error`, `judge_attempts`, retried from
//!   `judge_next_at_ms`). `status` is `waiting` until a step consumes it (`consumed`,
//!   `consumed_by_step`) or a newer skill generation makes it stale (`dropped`).
//! - `learning_steps`: one row per training step whose optimizer step was applied, for the
//!   learning dashboard and to continue the step counter and find the latest checkpoint
//!   after a restart. `sampler_path` is NULL and `error` set when saving the new weights
//!   for serving failed afterwards.
pub(crate) const V5_LEARNING: &str = "
CREATE TABLE learn_samples (
    id                  INTEGER PRIMARY KEY,
    session_id          TEXT NOT NULL,
    turn_index          INTEGER NOT NULL,
    skill_generation    INTEGER NOT NULL,
    prompt_tokens       BLOB NOT NULL,
    completion_tokens   BLOB NOT NULL,
    completion_logprobs BLOB NOT NULL,
    sampler_path        TEXT NULL,
    instruction         TEXT NOT NULL,
    response_text       TEXT NOT NULL,
    next_state          TEXT NULL,
    teacher_logprobs    BLOB NULL,
    judge_state         TEXT NOT NULL DEFAULT 'pending'
                            CHECK (judge_state IN ('pending', 'scored', 'held')),
    reward              REAL NULL,
    votes               TEXT NULL,
    judge_error         TEXT NULL,
    judge_attempts      INTEGER NOT NULL DEFAULT 0,
    judge_next_at_ms    INTEGER NOT NULL DEFAULT 0,
    status              TEXT NOT NULL DEFAULT 'waiting'
                            CHECK (status IN ('waiting', 'consumed', 'dropped')),
    consumed_by_step    INTEGER NULL,
    created_at_ms       INTEGER NOT NULL
);

CREATE INDEX learn_samples_waiting ON learn_samples(status, skill_generation, id);
CREATE INDEX learn_samples_judge ON learn_samples(judge_state, judge_next_at_ms)
    WHERE status = 'waiting';

CREATE TABLE learning_steps (
    step            INTEGER PRIMARY KEY,
    at_ms           INTEGER NOT NULL,
    samples         INTEGER NOT NULL,
    dropped         INTEGER NOT NULL,
    mean_reward     REAL NOT NULL,
    loss            REAL NULL,
    duration_ms     INTEGER NOT NULL,
    sampler_path    TEXT NULL,
    checkpoint_path TEXT NULL,
    error           TEXT NULL
);
";
