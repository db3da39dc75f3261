//! One retention run, blocking: old bodies dropped (after the learning jobs read them), then
//! the oldest until the size limit holds, then the freed space given back to the disk. A run
//! started by itself stops between batches as soon as a request arrives and leaves the rest
//! for the next quiet moment; what it did is kept.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use metaclaw_store::{DropRule, DroppedStats, Store, StoreError};
use serde::{Deserialize, Serialize};

use crate::config::StorageConfig;
use crate::effect::label::label_new_turns;

const DAY_MS: i64 = 86_400_000;
/// A turn a learning job has not read this long after it was due to go (the job is off, or
/// failing) is not waited for any more.
pub const STOP_WAITING_DAYS: i64 = 7;
/// Pages given back per step (4 KiB each): each step is one short write.
const GIVE_BACK_PAGES: u32 = 2048;
/// An older database is rewritten (once, to switch to giving back step by step) only when
/// this much is free, and at least a quarter of the file.
const REWRITE_MIN_FREE: u64 = 16 * 1024 * 1024;
/// Labelling pages of 500 turns done before dropping, at most (the effect figures need each
/// turn's words and the user's next message).
const LABEL_PAGES: usize = 200;
/// Turns dropped between two looks at the size, under a size limit.
const SIZE_BATCH: usize = 20;
/// How often a running rewrite checks whether it must stop.
const INTERRUPT_POLL: Duration = Duration::from_millis(100);

/// Why a run started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// MetaClaw was quiet and a run was due.
    Idle,
    /// The user asked (`metaclaw storage prune`, Settings).
    Asked,
}

/// What a run did, kept in the store's state and shown by `metaclaw storage`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionRun {
    pub at_ms: i64,
    pub trigger: Trigger,
    /// Bodies older than `storage.keep_turn_bodies_days`.
    pub by_age: DroppedStats,
    /// The oldest bodies, dropped to get under `storage.max_db_mb`.
    pub by_size: DroppedStats,
    /// Bytes the file gave back to the disk.
    pub given_back_bytes: u64,
    /// Whether the file was rewritten whole (once, for a database made by an older version).
    pub rewrote: bool,
    pub file_bytes_before: u64,
    pub file_bytes_after: u64,
    /// `false` when a request arrived and the run stopped early; the next one goes on.
    pub finished: bool,
    /// Still over `storage.max_db_mb` after dropping every body it may: why.
    pub over_limit: Option<String>,
    pub duration_ms: u64,
    /// What went wrong, when the run failed part way (what it did before stays done).
    pub error: Option<String>,
}

impl RetentionRun {
    /// A run that could not start or finish at all.
    pub fn failed(at_ms: i64, trigger: Trigger, error: String) -> RetentionRun {
        RetentionRun {
            at_ms,
            trigger,
            by_age: DroppedStats::default(),
            by_size: DroppedStats::default(),
            given_back_bytes: 0,
            rewrote: false,
            file_bytes_before: 0,
            file_bytes_after: 0,
            finished: false,
            over_limit: None,
            duration_ms: 0,
            error: Some(error),
        }
    }
}

/// The learning jobs a turn waits for before its body goes.
#[derive(Debug, Clone, Default)]
pub struct Readers {
    /// Per-session marks of the jobs that are on (`skills.evolved_through`, …).
    pub session_marks: Vec<String>,
}

/// Whether the run must stop (a request arrived); checked between steps.
pub type StopCheck = Arc<dyn Fn() -> bool + Send + Sync>;

/// When a run yields.
#[derive(Clone)]
pub struct Yield {
    /// Between batches: a run started by itself yields to any request; one the user asked
    /// for runs to the end.
    pub between_batches: StopCheck,
    /// During the one full rewrite, which holds the write lock for seconds per gigabyte:
    /// always at the first request, so the recorder never waits long enough to lose a turn.
    pub during_rewrite: StopCheck,
}

/// Runs retention on the database at `db` as of `now_ms`.
pub fn run(
    db: &Path,
    config: &StorageConfig,
    readers: &Readers,
    now_ms: i64,
    trigger: Trigger,
    yields: &Yield,
) -> RetentionRun {
    let started = Instant::now();
    let mut out = RetentionRun::failed(now_ms, trigger, String::new());
    out.error = None;
    out.file_bytes_before = file_bytes(db);
    if let Err(e) = steps(db, config, readers, now_ms, yields, &mut out) {
        out.error = Some(e.to_string());
    }
    out.file_bytes_after = file_bytes(db);
    out.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    out
}

fn steps(
    db: &Path,
    config: &StorageConfig,
    readers: &Readers,
    now_ms: i64,
    yields: &Yield,
    out: &mut RetentionRun,
) -> Result<(), StoreError> {
    let stop = &yields.between_batches;
    let mut store = Store::open(db)?;
    // The effect figures read each turn's words: label what is new before any body goes.
    if let Err(e) = label_new_turns(&mut store, LABEL_PAGES) {
        tracing::warn!(error = %e, "retention: could not label the newest turns first");
    }
    let days = i64::from(config.keep_turn_bodies_days);
    if days > 0 {
        let before_ms = now_ms.saturating_sub(days.saturating_mul(DAY_MS));
        let rule = rule(readers, before_ms, now_ms);
        if !drop_all(&mut store, &rule, stop, &mut out.by_age, |_| Ok(true))? {
            return Ok(());
        }
    }
    if config.max_db_mb > 0 {
        let limit = config.max_db_mb.saturating_mul(1_000_000);
        let rule = DropRule {
            batch: SIZE_BATCH,
            ..rule(readers, now_ms, now_ms)
        };
        let over = |store: &Store| Ok(store.used_bytes()? > limit);
        if over(&store)? {
            let more = drop_all(&mut store, &rule, stop, &mut out.by_size, over)?;
            if !more {
                return Ok(());
            }
            if over(&store)? {
                out.over_limit = Some(format!(
                    "{} MB are in use after dropping every conversation MetaClaw may: the rest is skills, memories, figures and turns learning has not read yet",
                    store.used_bytes()? / 1_000_000
                ));
            }
        }
    }
    if !give_back(&mut store, yields, out)? {
        return Ok(());
    }
    if let Err(e) = store.checkpoint() {
        tracing::debug!(error = %e, "retention: checkpoint deferred");
    }
    out.finished = true;
    Ok(())
}

/// Which turns may go: created before `before_ms`, read by every job that is on (or waited
/// for long enough), and labelled for the effect figures.
fn rule(readers: &Readers, before_ms: i64, now_ms: i64) -> DropRule {
    DropRule {
        before_ms,
        session_marks: readers.session_marks.clone(),
        id_marks: vec![crate::effect::label::MARK.to_owned()],
        stop_waiting_before_ms: before_ms
            .min(now_ms)
            .saturating_sub(STOP_WAITING_DAYS * DAY_MS),
        batch: 0,
    }
}

/// Drops batches while `rule` allows and `go_on` holds; `false` when it had to stop.
fn drop_all(
    store: &mut Store,
    rule: &DropRule,
    stop: &StopCheck,
    total: &mut DroppedStats,
    go_on: impl Fn(&Store) -> Result<bool, StoreError>,
) -> Result<bool, StoreError> {
    loop {
        if stop() {
            return Ok(false);
        }
        let (batch, more) = store.drop_turn_bodies(rule)?;
        total.turns += batch.turns;
        total.parts += batch.parts;
        total.bytes += batch.bytes;
        if !more || !go_on(store)? {
            return Ok(true);
        }
    }
}

/// Gives the free pages back; `false` when it had to stop.
fn give_back(
    store: &mut Store,
    yields: &Yield,
    out: &mut RetentionRun,
) -> Result<bool, StoreError> {
    let stop = &yields.between_batches;
    if !store.incremental_vacuum()? {
        let free = store.free_bytes()?;
        if free < REWRITE_MIN_FREE || free < out.file_bytes_before / 4 {
            return Ok(true);
        }
        return rewrite(store, &yields.during_rewrite, out);
    }
    loop {
        if stop() {
            return Ok(false);
        }
        let given = store.give_back_pages(GIVE_BACK_PAGES)?;
        out.given_back_bytes += given;
        if given == 0 {
            return Ok(true);
        }
    }
}

/// The one full rewrite of an older database, stopped by an interrupt when a request
/// arrives (SQLite then rolls it back: nothing is lost, the next quiet moment tries again).
fn rewrite(
    store: &mut Store,
    stop: &StopCheck,
    out: &mut RetentionRun,
) -> Result<bool, StoreError> {
    let free_before = store.free_bytes()?;
    let handle = store.interrupt_handle();
    let done = Arc::new(AtomicBool::new(false));
    let interrupted = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (stop, done, interrupted) = (Arc::clone(stop), done.clone(), interrupted.clone());
        std::thread::Builder::new()
            .name("metaclaw-retention-watch".into())
            .spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    if stop() {
                        interrupted.store(true, Ordering::Relaxed);
                        handle.interrupt();
                        return;
                    }
                    std::thread::sleep(INTERRUPT_POLL);
                }
            })
    };
    let result = store.rewrite_compact();
    done.store(true, Ordering::Relaxed);
    if let Ok(w) = watcher {
        let _ = w.join();
    }
    match result {
        Ok(()) => {
            out.rewrote = true;
            out.given_back_bytes += free_before;
            Ok(true)
        }
        Err(_) if interrupted.load(Ordering::Relaxed) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Keeps `run` as the last one (shown by status and `metaclaw storage`).
pub fn remember(db: &Path, run: &RetentionRun) -> Result<(), super::StorageError> {
    let text = serde_json::to_string(run)?;
    Ok(Store::open(db)?.state_set(super::report::LAST_RUN_KEY, &text)?)
}

fn file_bytes(db: &Path) -> u64 {
    let size = |suffix: &str| {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        std::fs::metadata(p).map_or(0, |m| m.len())
    };
    size("") + size("-wal")
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaclaw_store::NewTurn;

    const NOW: i64 = 1_000 * DAY_MS;

    /// `n` turns in their own sessions, a day apart up to `NOW`, each with ~60 KB that does
    /// not compress.
    fn database(n: i64) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("metaclaw.db");
        let mut store = Store::open(&db).unwrap();
        let turns: Vec<NewTurn> = (0..n)
            .map(|i| NewTurn {
                session_id: format!("s{i}"),
                turn_type: "main".into(),
                request_json: format!(
                    r#"{{"messages":[{{"role":"user","content":"{}"}}]}}"#,
                    (0..9000u64)
                        .map(|k| format!("{:x}", (i as u64 * 7919 + k) * 2_654_435_761 % 1_000_003))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                status: 200,
                input_tokens: Some(7),
                created_at_ms: NOW - (n - i) * DAY_MS,
                ..NewTurn::default()
            })
            .collect();
        store.insert_turns(&turns).unwrap();
        (dir, db)
    }

    fn never() -> Yield {
        Yield {
            between_batches: Arc::new(|| false),
            during_rewrite: Arc::new(|| false),
        }
    }

    fn kept(db: &Path) -> u64 {
        Store::open_read_only(db)
            .unwrap()
            .body_counts()
            .unwrap()
            .with_bodies
    }

    #[test]
    fn the_size_limit_drops_the_oldest_until_it_fits() {
        let (_dir, db) = database(60);
        let used = Store::open(&db).unwrap().used_bytes().unwrap();
        assert!(used > 1_200_000, "{used}");
        let config = StorageConfig {
            keep_turn_bodies_days: 0,
            max_db_mb: 1,
        };
        let run = run(
            &db,
            &config,
            &Readers::default(),
            NOW,
            Trigger::Asked,
            &never(),
        );
        assert_eq!(run.error, None);
        assert!(run.finished && run.over_limit.is_none(), "{run:?}");
        assert_eq!(run.by_age.turns, 0);
        assert!(run.by_size.turns > 0 && run.by_size.turns < 60, "{run:?}");
        let store = Store::open_read_only(&db).unwrap();
        assert!(store.used_bytes().unwrap() <= 1_000_000);
        // The newest stayed.
        let newest = store.session_turns("s59").unwrap();
        assert_ne!(newest[0].request_json, metaclaw_store::DROPPED_REQUEST_JSON);
        let oldest = store.session_turns("s0").unwrap();
        assert_eq!(oldest[0].request_json, metaclaw_store::DROPPED_REQUEST_JSON);
        assert_eq!(oldest[0].input_tokens, Some(7), "figures stay");
        assert!(run.file_bytes_after < run.file_bytes_before);
    }

    #[test]
    fn turns_a_job_has_not_read_wait_and_a_request_stops_the_run() {
        let (_dir, db) = database(30);
        let config = StorageConfig {
            keep_turn_bodies_days: 10,
            max_db_mb: 0,
        };
        let readers = Readers {
            session_marks: vec!["memory.extracted_through".into()],
        };
        // A request arrived at once: nothing is done, and the run says so.
        let stopped = run(
            &db,
            &config,
            &readers,
            NOW,
            Trigger::Idle,
            &Yield {
                between_batches: Arc::new(|| true),
                during_rewrite: Arc::new(|| true),
            },
        );
        assert!(!stopped.finished && stopped.error.is_none());
        assert_eq!(kept(&db), 30);
        // Nothing read yet: only turns past the week of waiting go (older than 17 days).
        let r = run(&db, &config, &readers, NOW, Trigger::Idle, &never());
        assert_eq!(r.by_age.turns, 13, "{r:?}");
        assert!(r.finished);
        // The job read session s15 (20 days old, within the week of waiting): it goes too.
        Store::open(&db)
            .unwrap()
            .state_set("memory.extracted_through.s15", "0")
            .unwrap();
        let r = run(&db, &config, &readers, NOW, Trigger::Idle, &never());
        assert_eq!(r.by_age.turns, 1, "{r:?}");
        assert_eq!(kept(&db), 16);
    }
}
