//! What `metaclaw storage`, status and the dashboard show: the database's size, what takes
//! the space, the retention in force and its last run.

use std::path::Path;

use metaclaw_store::{BodyCounts, Space, Store, StoreError};
use serde::{Deserialize, Serialize};

use super::retention::{RetentionRun, Trigger};
use crate::config::StorageConfig;

/// Where the last run is kept in the store's state.
pub(super) const LAST_RUN_KEY: &str = "storage.retention.last_run";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StorageReport {
    pub path: String,
    pub space: Space,
    pub bodies: BodyCounts,
    pub retention: StorageConfig,
    pub last_run: Option<RetentionRun>,
    /// A run is going on now.
    pub running: bool,
    pub measured_at_ms: i64,
}

/// The cheap part, for status: sizes from the file system, the settings, the last run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StorageStatus {
    pub file_bytes: u64,
    pub retention: StorageConfig,
    pub last_run: Option<RetentionRun>,
}

/// Measures the database at `db` (read-only; one pass over its pages).
pub fn measure(
    db: &Path,
    retention: &StorageConfig,
    now_ms: i64,
) -> Result<StorageReport, StoreError> {
    let store = Store::open_read_only(db)?;
    Ok(StorageReport {
        path: db.display().to_string(),
        space: store.space()?,
        bodies: store.body_counts()?,
        retention: retention.clone(),
        last_run: last_run(&store),
        running: false,
        measured_at_ms: now_ms,
    })
}

/// The last run recorded in `store`, if any (an unreadable record counts as none).
pub fn last_run(store: &Store) -> Option<RetentionRun> {
    let text = store.state_get(LAST_RUN_KEY).ok().flatten()?;
    serde_json::from_str(&text).ok()
}

/// `metaclaw storage` as text.
pub fn lines(r: &StorageReport, now_ms: i64) -> Vec<String> {
    let s = &r.space;
    let mut out = vec![format!("database: {} ({})", size(s.total_bytes()), r.path)];
    for p in &s.parts {
        out.push(format!("  {:<14} {:>10}", p.what, size(p.bytes)));
    }
    if s.free_bytes > 0 {
        out.push(format!(
            "  {:<14} {:>10}  (reused, or given back after the next retention run)",
            "free",
            size(s.free_bytes)
        ));
    }
    if s.wal_bytes > 0 {
        out.push(format!(
            "  {:<14} {:>10}  (folded into the file at the next checkpoint)",
            "write log",
            size(s.wal_bytes)
        ));
    }
    let b = &r.bodies;
    let oldest = b
        .oldest_with_body_ms
        .map(|at| format!(", the oldest from {}", ago(now_ms, at)))
        .unwrap_or_default();
    out.push(format!(
        "conversations: {} turns, {} with their messages{oldest}",
        b.turns, b.with_bodies
    ));
    out.push(format!("retention: {}", retention_words(&r.retention)));
    out.push(format!(
        "last run: {}",
        last_run_words(r.last_run.as_ref(), now_ms)
    ));
    if r.running {
        out.push("a retention run is going on now".into());
    }
    out
}

/// The settings in words.
pub fn retention_words(c: &StorageConfig) -> String {
    let age = match c.keep_turn_bodies_days {
        0 => "messages kept forever".to_owned(),
        1 => "messages kept 1 day".to_owned(),
        d => format!("messages kept {d} days"),
    };
    let cap = match c.max_db_mb {
        0 => "no size limit".to_owned(),
        mb => format!("at most {mb} MB"),
    };
    format!("{age}, {cap}; figures, skills and memories kept for ever")
}

/// The last run in words: when, why, what it did.
pub fn last_run_words(run: Option<&RetentionRun>, now_ms: i64) -> String {
    let Some(run) = run else {
        return "never (it runs when MetaClaw has been quiet for 5 minutes, every 6 hours at most)"
            .into();
    };
    let why = match run.trigger {
        Trigger::Idle => "while quiet",
        Trigger::Asked => "when asked",
    };
    let dropped = run.by_age.turns + run.by_size.turns;
    let mut text = format!(
        "{} ({why}): {dropped} turns' messages dropped, {} given back",
        ago(now_ms, run.at_ms),
        size(run.given_back_bytes)
    );
    if run.rewrote {
        text.push_str(", file rewritten once to give space back from now on");
    }
    if !run.finished && run.error.is_none() {
        text.push_str("; stopped for a request, goes on at the next quiet moment");
    }
    if let Some(e) = &run.error {
        text.push_str(&format!("; failed: {e}"));
    }
    if let Some(o) = &run.over_limit {
        text.push_str(&format!("; still over the limit: {o}"));
    }
    text
}

/// Bytes as people read them.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1000.0;
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

fn ago(now_ms: i64, at_ms: i64) -> String {
    let mins = now_ms.saturating_sub(at_ms).max(0) / 60_000;
    match mins {
        0 => "just now".into(),
        m if m < 60 => format!("{m} min ago"),
        m if m < 48 * 60 => format!("{} h ago", m / 60),
        m => format!("{} days ago", m / (24 * 60)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_settings_read_as_words() {
        assert_eq!(size(999), "999 B");
        assert_eq!(size(1_234_567), "1.2 MB");
        assert_eq!(size(1_200_000_000), "1.2 GB");
        assert_eq!(
            retention_words(&StorageConfig::default()),
            "messages kept 90 days, no size limit; figures, skills and memories kept for ever"
        );
        let c = StorageConfig {
            keep_turn_bodies_days: 0,
            max_db_mb: 500,
        };
        assert!(retention_words(&c).starts_with("messages kept forever, at most 500 MB"));
        assert!(last_run_words(None, 0).starts_with("never"));
    }
}
