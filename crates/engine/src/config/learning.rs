//! `learning:` — how MetaClaw proves what its learning does.

use serde::{Deserialize, Serialize};

/// Largest `learning.holdout`: beyond half, most sessions would go without learning.
pub const MAX_HOLDOUT: f64 = 0.5;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LearningConfig {
    /// Share of sessions (0 to 0.5) served without MetaClaw's injected block, so the
    /// dashboard can compare outcomes with and without it. 0 = off.
    pub holdout: f64,
}
