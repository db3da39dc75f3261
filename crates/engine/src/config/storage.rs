//! `storage:` — how long recorded conversations are kept, and how large the database may grow.

use serde::{Deserialize, Serialize};

/// Longest `storage.keep_turn_bodies_days` short of forever (about 100 years).
pub const MAX_KEEP_DAYS: u32 = 36_500;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StorageConfig {
    /// Days a turn's request and reply are kept; then they are dropped (its figures, and
    /// every skill and memory learned from it, stay). 0 = forever.
    pub keep_turn_bodies_days: u32,
    /// Above this many MB of tables, the oldest bodies are dropped until it fits. 0 = no
    /// limit.
    pub max_db_mb: u64,
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            keep_turn_bodies_days: 90,
            max_db_mb: 0,
        }
    }
}

impl StorageConfig {
    /// Whether retention has anything to do.
    pub fn active(&self) -> bool {
        self.keep_turn_bodies_days > 0 || self.max_db_mb > 0
    }
}
