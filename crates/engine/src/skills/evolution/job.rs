//! What starts an evolution and what it reports.

use metaclaw_skills::evolve::TurnDigest;
use metaclaw_store::RejectedSkill;
use serde::Serialize;
use tokio::sync::oneshot;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// `skills.evolution_every_n_turns` main turns of one session.
    EveryNTurns,
    /// The session ended (explicitly or idle) with turns not yet evolved on.
    SessionEnd,
    /// Asked for through the admin API.
    Manual,
    /// The RL trainer saw a batch succeed too rarely.
    LowSuccess,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::EveryNTurns => "every_n_turns",
            Trigger::SessionEnd => "session_end",
            Trigger::Manual => "manual",
            Trigger::LowSuccess => "low_success",
        }
    }
}

/// The result of one evolution, as logged.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Outcome {
    pub trigger: Trigger,
    pub sessions: Vec<String>,
    /// `added` (something was written), `proposed` (filed for approval, `skills.review:
    /// ask`), `nothing` (the evolver found no lesson, or every
    /// proposal was rejected), `failed`, or `skipped` (no turns to learn from).
    pub outcome: String,
    pub added: Vec<String>,
    pub improved: Vec<String>,
    /// Filed as proposals instead of written (`skills.review: ask`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub proposed: Vec<String>,
    pub rejected: Vec<RejectedSkill>,
    pub error: Option<String>,
    /// The skill generation once the written skills were loaded.
    pub generation: u64,
    /// Turns older than the window sent to the evolver, not read (newest turns win).
    #[serde(skip_serializing_if = "is_zero")]
    pub older_turns_skipped: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

pub(super) struct Job {
    pub trigger: Trigger,
    pub sessions: Vec<String>,
    /// Judged samples from the RL trainer; `None` reads the sessions' recorded turns.
    pub samples: Option<Vec<TurnDigest>>,
    pub reply: Option<oneshot::Sender<Outcome>>,
}
