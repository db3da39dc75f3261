//! The database on disk over months: retention (old conversations' messages dropped once
//! learning has read them, the oldest first when a size limit is set, the space given back)
//! and what it takes, for status, `metaclaw storage` and the dashboard.
//!
//! Runs start by themselves once MetaClaw has been quiet for [`REST`] and the last run is
//! [`EVERY`] old, and stop between batches as soon as a request arrives; `run_now` (the CLI,
//! Settings) runs to the end.

mod report;
pub mod retention;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::idle::LastActivity;
use metaclaw_store::{Store, StoreError};

pub use report::{
    StorageReport, StorageStatus, last_run, last_run_words, lines, measure, retention_words, size,
};
pub use retention::{Readers, RetentionRun, StopCheck, Trigger, Yield};

use crate::config::StorageConfig;
use crate::events::{EngineEvent, Events};
use crate::supervise::Supervisor;

/// How long MetaClaw must have served no request before a run starts by itself.
pub const REST: Duration = Duration::from_secs(5 * 60);
/// How often a run is due.
pub const EVERY: Duration = Duration::from_secs(6 * 3600);
/// How often the service looks whether a run is due.
const CHECK: Duration = Duration::from_secs(60);
/// A measured report is reused this long (measuring reads every page).
const REPORT_TTL: Duration = Duration::from_secs(60);
const DAY_MS: i64 = 86_400_000;

/// The marks of the learning jobs a turn may wait for (see [`Readers`]).
pub const EVOLUTION_MARK: &str = crate::skills::evolution::MARK;
pub const EXTRACTION_MARK: &str = crate::memory::extraction::JOB;

/// Moves the clock retention measures age against by this many days; for tests of
/// retention through the binary, never set by MetaClaw itself.
pub const CLOCK_OFFSET_ENV: &str = "METACLAW_RETENTION_CLOCK_OFFSET_DAYS";

/// Now, as retention sees it (Unix ms).
pub fn now_ms() -> i64 {
    static OFFSET: OnceLock<i64> = OnceLock::new();
    let days = *OFFSET.get_or_init(|| {
        let Ok(text) = std::env::var(CLOCK_OFFSET_ENV) else {
            return 0;
        };
        text.trim().parse().unwrap_or_else(|_| {
            tracing::warn!(value = %text, "{CLOCK_OFFSET_ENV} is not a whole number of days; ignored");
            0
        })
    });
    crate::clock::now_ms().saturating_add(days.saturating_mul(DAY_MS))
}

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the storage report stopped: {0}")]
    Task(#[from] tokio::task::JoinError),
    #[error("cannot record the retention run: {0}")]
    Json(#[from] serde_json::Error),
}

/// The engine's retention service and storage report.
#[derive(Clone)]
pub struct Storage {
    inner: Arc<Inner>,
}

struct Inner {
    db: PathBuf,
    config: StorageConfig,
    readers: Readers,
    /// Agent requests served so far: a change means a request arrived.
    requests: Arc<dyn Fn() -> u64 + Send + Sync>,
    last_request: LastActivity,
    events: Events,
    /// One run at a time.
    run: tokio::sync::Mutex<()>,
    running: AtomicBool,
    last_run: Mutex<Option<RetentionRun>>,
    report: Mutex<Option<(Instant, StorageReport)>>,
}

impl Storage {
    pub fn new(
        db: PathBuf,
        config: StorageConfig,
        readers: Readers,
        requests: Arc<dyn Fn() -> u64 + Send + Sync>,
        last_request: LastActivity,
        events: Events,
    ) -> Storage {
        let last = Store::open_read_only(&db).ok().and_then(|s| last_run(&s));
        Storage {
            inner: Arc::new(Inner {
                db,
                config,
                readers,
                requests,
                last_request,
                events,
                run: tokio::sync::Mutex::new(()),
                running: AtomicBool::new(false),
                last_run: Mutex::new(last),
                report: Mutex::new(None),
            }),
        }
    }

    /// Starts the background service: a run whenever one is due and MetaClaw is quiet.
    pub fn start(&self, tasks: &Supervisor) {
        if !self.inner.config.active() {
            return;
        }
        let (me, shutdown) = (self.clone(), tasks.shutdown_token());
        tasks.spawn_restarting("storage retention", move || {
            let (me, shutdown) = (me.clone(), shutdown.clone());
            async move {
                let mut every = tokio::time::interval(CHECK);
                every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        _ = every.tick() => {}
                        () = shutdown.cancelled() => return,
                    }
                    let quiet = me.inner.last_request.idle_for(SystemClock.now());
                    if due(me.last_run_at(), now_ms(), quiet) {
                        me.run(Trigger::Idle).await;
                    }
                }
            }
        });
    }

    /// Runs retention now, to the end (the user asked).
    pub async fn run_now(&self) -> RetentionRun {
        self.run(Trigger::Asked).await
    }

    async fn run(&self, trigger: Trigger) -> RetentionRun {
        let _one = self.inner.run.lock().await;
        let inner = Arc::clone(&self.inner);
        let request_arrived: StopCheck = {
            let requests = Arc::clone(&inner.requests);
            let seen = requests();
            Arc::new(move || requests() != seen)
        };
        let yields = Yield {
            between_batches: match trigger {
                Trigger::Asked => Arc::new(|| false),
                Trigger::Idle => Arc::clone(&request_arrived),
            },
            during_rewrite: request_arrived,
        };
        inner.running.store(true, Ordering::Relaxed);
        let task = {
            let inner = Arc::clone(&inner);
            tokio::task::spawn_blocking(move || {
                let run = retention::run(
                    &inner.db,
                    &inner.config,
                    &inner.readers,
                    now_ms(),
                    trigger,
                    &yields,
                );
                if let Err(e) = retention::remember(&inner.db, &run) {
                    tracing::warn!(error = %e, "retention: could not record its run");
                }
                run
            })
        };
        let run = match task.await {
            Ok(run) => run,
            Err(e) => RetentionRun::failed(now_ms(), trigger, format!("the run stopped: {e}")),
        };
        inner.running.store(false, Ordering::Relaxed);
        log(&run);
        *inner
            .last_run
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(run.clone());
        *inner.report.lock().unwrap_or_else(PoisonError::into_inner) = None;
        inner.events.emit(EngineEvent::StorageChanged);
        run
    }

    fn last_run_at(&self) -> Option<i64> {
        self.inner
            .last_run
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|r| r.at_ms)
    }

    /// The full report, measured at most [`REPORT_TTL`] ago.
    pub async fn report(&self) -> Result<StorageReport, StorageError> {
        let cached = self
            .inner
            .report
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .filter(|(at, _)| at.elapsed() < REPORT_TTL)
            .map(|(_, r)| r.clone());
        let mut report = match cached {
            Some(r) => r,
            None => {
                let inner = Arc::clone(&self.inner);
                let measured = tokio::task::spawn_blocking(move || {
                    measure(&inner.db, &inner.config, now_ms())
                })
                .await??;
                *self
                    .inner
                    .report
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) =
                    Some((Instant::now(), measured.clone()));
                measured
            }
        };
        report.running = self.inner.running.load(Ordering::Relaxed);
        report.last_run = self
            .inner
            .last_run
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Ok(report)
    }

    /// The cheap part of the report, for status.
    pub fn status(&self) -> StorageStatus {
        let size = |suffix: &str| {
            let mut p = self.inner.db.as_os_str().to_owned();
            p.push(suffix);
            std::fs::metadata(p).map_or(0, |m| m.len())
        };
        StorageStatus {
            file_bytes: size("") + size("-wal"),
            retention: self.inner.config.clone(),
            last_run: self
                .inner
                .last_run
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }
}

/// Whether a run is due at `now_ms`, after `quiet` without requests.
fn due(last_run_ms: Option<i64>, now_ms: i64, quiet: Duration) -> bool {
    let every = i64::try_from(EVERY.as_millis()).unwrap_or(i64::MAX);
    quiet >= REST && last_run_ms.is_none_or(|at| now_ms.saturating_sub(at) >= every)
}

fn log(run: &RetentionRun) {
    let dropped = run.by_age.turns + run.by_size.turns;
    match &run.error {
        Some(e) => tracing::warn!(error = %e, dropped, "retention run failed part way"),
        None => tracing::info!(
            dropped,
            given_back = run.given_back_bytes,
            rewrote = run.rewrote,
            finished = run.finished,
            ms = run.duration_ms,
            "retention ran"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_due_after_five_quiet_minutes_every_six_hours() {
        let hour = 3_600_000;
        let quiet = REST;
        assert!(due(None, 0, quiet), "never ran");
        assert!(
            !due(None, 0, REST - Duration::from_secs(1)),
            "not quiet yet"
        );
        assert!(!due(Some(0), 5 * hour, quiet));
        assert!(due(Some(0), 6 * hour, quiet));
        assert!(
            !due(Some(10 * hour), 6 * hour, quiet),
            "a clock set back waits"
        );
    }
}
