//! The engine's background tasks under one owner. Each task has a name; its end and any
//! panic are logged; a task that can start over is restarted after a panic with a growing
//! pause; every task's state is reported in status; shutdown waits for them, up to a
//! deadline. Only this module spawns tasks (`clippy.toml` bans bare `tokio::spawn` in the
//! engine), so no worker can die unseen.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio::task::{AbortHandle, JoinHandle};
use tokio_util::sync::CancellationToken;

/// The first pause before a restart; it doubles after each panic up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A run that lasted this long before panicking starts the pauses over.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// What a task is doing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    Running,
    /// Panicked; starts again after a pause.
    Restarting,
    /// Returned (its work is done, or shutdown).
    Ended,
    /// Panicked and is not restarted.
    Failed,
}

/// One task, for status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskReport {
    pub name: String,
    pub state: TaskState,
    /// Times it was started again after a panic.
    pub restarts: u32,
    /// The last panic's message, if it ever panicked.
    pub last_panic: Option<String>,
    /// When the last panic happened (Unix milliseconds).
    pub last_panic_ms: Option<i64>,
}

/// A handle on the engine's tasks; clones share them.
#[derive(Clone)]
pub struct Supervisor {
    inner: Arc<Inner>,
}

struct Inner {
    shutdown: CancellationToken,
    backoff: (Duration, Duration),
    tasks: Mutex<Vec<Entry>>,
}

struct Entry {
    report: Arc<Mutex<TaskReport>>,
    handle: JoinHandle<()>,
}

impl Supervisor {
    /// Tasks that stop restarting once `shutdown` is cancelled.
    pub fn new(shutdown: CancellationToken) -> Self {
        Self::with_backoff(shutdown, MIN_BACKOFF, MAX_BACKOFF)
    }

    /// For parts started on their own (tests, tools): nothing cancels it.
    pub fn detached() -> Self {
        Self::new(CancellationToken::new())
    }

    /// [`Supervisor::new`] with other restart pauses (tests).
    pub fn with_backoff(shutdown: CancellationToken, min: Duration, max: Duration) -> Self {
        Supervisor {
            inner: Arc::new(Inner {
                shutdown,
                backoff: (min, max.max(min)),
                tasks: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The token whose cancellation stops the engine.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// Runs `task` once. A panic is logged and reported as `failed`: for work that cannot
    /// simply start over (a one-off job, a task holding what it was given).
    pub fn spawn<F>(&self, name: &str, task: F) -> AbortHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let mut once = Some(task);
        self.start(name, false, move || once.take())
    }

    /// [`Supervisor::spawn`] for a task whose result the caller awaits; the receiver errs
    /// when the task panicked.
    pub fn spawn_answering<T, F>(&self, name: &str, task: F) -> oneshot::Receiver<T>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.spawn(name, async move {
            let _ = tx.send(task.await);
        });
        rx
    }

    /// Runs `make()`'s task and, when it panics before shutdown, logs it and runs a new one
    /// from `make` after a pause (1 s, doubling up to 60 s; back to 1 s after a minute of
    /// health). A task that returns has ended and is not restarted.
    pub fn spawn_restarting<F, M>(&self, name: &str, mut make: M) -> AbortHandle
    where
        M: FnMut() -> F + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        self.start(name, true, move || Some(make()))
    }

    /// Returns a handle that stops the task (for tasks tied to an owner's lifetime).
    fn start<F, M>(&self, name: &str, restart: bool, mut make: M) -> AbortHandle
    where
        M: FnMut() -> Option<F> + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let report = Arc::new(Mutex::new(TaskReport {
            name: name.to_owned(),
            state: TaskState::Running,
            restarts: 0,
            last_panic: None,
            last_panic_ms: None,
        }));
        let shared = Arc::clone(&report);
        let (shutdown, (min, max)) = (self.inner.shutdown.clone(), self.inner.backoff);
        let name = name.to_owned();
        let name_of = name.clone();
        #[allow(clippy::disallowed_methods)] // the one place tasks are spawned
        let handle = tokio::spawn(async move {
            let mut pause = min;
            while let Some(task) = make() {
                set(&shared, |r| r.state = TaskState::Running);
                let started = Instant::now();
                let outcome = AssertUnwindSafe(task).catch_unwind().await;
                let Err(panic) = outcome else {
                    tracing::debug!(task = %name, "background task ended");
                    set(&shared, |r| r.state = TaskState::Ended);
                    return;
                };
                let message = panic_message(panic.as_ref());
                let again = restart && !shutdown.is_cancelled();
                tracing::error!(task = %name, panic = %message, restarting = again, "background task panicked");
                set(&shared, |r| {
                    r.last_panic = Some(message);
                    r.last_panic_ms = Some(crate::clock::now_ms());
                    r.state = if again {
                        TaskState::Restarting
                    } else {
                        TaskState::Failed
                    };
                });
                if !again {
                    return;
                }
                if started.elapsed() >= HEALTHY_RUN {
                    pause = min;
                }
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = shutdown.cancelled() => {
                        set(&shared, |r| r.state = TaskState::Failed);
                        return;
                    }
                }
                pause = (pause * 2).min(max);
                set(&shared, |r| r.restarts += 1);
                tracing::info!(task = %name, "background task restarted");
            }
        });
        let abort = handle.abort_handle();
        let mut tasks = self.lock();
        // A failure stays listed until the same task starts again, so a task started
        // over and over (a reload, say) lists one failure, not one per start.
        tasks.retain(|e| e.worth_reporting() && !(e.handle.is_finished() && e.named(&name_of)));
        tasks.push(Entry { report, handle });
        abort
    }

    /// Every task running, restarting or failed, by start order.
    pub fn report(&self) -> Vec<TaskReport> {
        self.lock()
            .iter()
            .filter(|e| e.worth_reporting())
            .map(|e| read(&e.report))
            .collect()
    }

    /// Waits for every task to finish, up to `deadline`; those still running then are
    /// aborted and named in the answer. Call after cancelling the shutdown token.
    pub async fn join(&self, deadline: Duration) -> Vec<String> {
        let entries: Vec<Entry> = std::mem::take(&mut *self.lock());
        let until = tokio::time::Instant::now() + deadline;
        let mut late = Vec::new();
        for mut entry in entries {
            if tokio::time::timeout_at(until, &mut entry.handle)
                .await
                .is_err()
            {
                entry.handle.abort();
                late.push(read(&entry.report).name);
            }
        }
        if !late.is_empty() {
            tracing::warn!(tasks = ?late, "background tasks did not stop in time; aborted");
        }
        late
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.inner
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Entry {
    /// Tasks that ended cleanly or were stopped by their owner leave; failures stay.
    fn worth_reporting(&self) -> bool {
        !self.handle.is_finished() || read(&self.report).state == TaskState::Failed
    }

    fn named(&self, name: &str) -> bool {
        read(&self.report).name == name
    }
}

fn set(report: &Mutex<TaskReport>, f: impl FnOnce(&mut TaskReport)) {
    f(&mut report.lock().unwrap_or_else(PoisonError::into_inner));
}

fn read(report: &Mutex<TaskReport>) -> TaskReport {
    report
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use tokio::sync::mpsc;

    use super::*;

    fn quick(shutdown: CancellationToken) -> Supervisor {
        Supervisor::with_backoff(shutdown, Duration::from_millis(1), Duration::from_millis(4))
    }

    #[tokio::test]
    async fn a_worker_killed_by_a_panic_is_restarted_and_reported() {
        let tasks = quick(CancellationToken::new());
        let runs = Arc::new(AtomicU32::new(0));
        let (started, mut seen) = mpsc::unbounded_channel();
        let counter = Arc::clone(&runs);
        tasks.spawn_restarting("worker", move || {
            let (counter, started) = (Arc::clone(&counter), started.clone());
            async move {
                let run = counter.fetch_add(1, Ordering::SeqCst);
                let _ = started.send(run);
                if run < 2 {
                    panic!("worker {run} killed");
                }
                std::future::pending::<()>().await;
            }
        });
        for expected in 0..3 {
            assert_eq!(seen.recv().await, Some(expected));
        }
        let report = tasks.report();
        assert_eq!(report.len(), 1);
        let worker = &report[0];
        assert_eq!(worker.name, "worker");
        assert_eq!(worker.state, TaskState::Running);
        assert_eq!(worker.restarts, 2);
        assert_eq!(worker.last_panic.as_deref(), Some("worker 1 killed"));
        assert!(worker.last_panic_ms.is_some());
    }

    #[tokio::test]
    async fn a_one_off_task_that_panics_is_reported_failed_and_not_run_again() {
        let tasks = quick(CancellationToken::new());
        let runs = Arc::new(AtomicU32::new(0));
        let counter = Arc::clone(&runs);
        tasks.spawn("once", async move {
            counter.fetch_add(1, Ordering::SeqCst);
            panic!("boom");
        });
        while !tasks
            .report()
            .first()
            .is_some_and(|r| r.state == TaskState::Failed)
        {
            tokio::task::yield_now().await;
        }
        let failed = &tasks.report()[0];
        assert_eq!(
            (failed.restarts, failed.last_panic.as_deref()),
            (0, Some("boom"))
        );
        assert!(tasks.join(Duration::from_secs(5)).await.is_empty());
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        // `join` took the entries; a second look shows nothing left running.
        assert!(tasks.report().is_empty());
    }

    #[tokio::test]
    async fn a_failed_task_stays_in_the_report_and_an_ended_one_leaves() {
        let tasks = quick(CancellationToken::new());
        tasks.spawn("fails", async { panic!("broken") });
        tasks.spawn("ends", async {});
        // Polls the report (each look yields to the tasks) until both have finished.
        let report = loop {
            let report = tasks.report();
            let failed = report
                .iter()
                .any(|r| r.name == "fails" && r.state == TaskState::Failed);
            if failed && !report.iter().any(|r| r.name == "ends") {
                break report;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(report.len(), 1);
        assert_eq!(report[0].last_panic.as_deref(), Some("broken"));
        tasks.spawn("later", std::future::pending());
        let names: Vec<String> = tasks.report().into_iter().map(|r| r.name).collect();
        assert_eq!(names, ["fails", "later"]);
    }

    #[tokio::test]
    async fn a_task_failing_at_every_start_is_listed_once() {
        let tasks = quick(CancellationToken::new());
        for round in 1..=3 {
            tasks.spawn("reload", async move { panic!("broken {round}") });
            while !tasks
                .report()
                .iter()
                .any(|r| r.last_panic.as_deref() == Some(&format!("broken {round}")))
            {
                tokio::task::yield_now().await;
            }
        }
        let report = tasks.report();
        assert_eq!(report.len(), 1, "{report:?}");
        assert_eq!(report[0].last_panic.as_deref(), Some("broken 3"));
    }

    #[tokio::test]
    async fn shutdown_waits_for_tasks_and_aborts_those_past_the_deadline() {
        let shutdown = CancellationToken::new();
        let tasks = quick(shutdown.clone());
        let (tx, mut rx) = mpsc::unbounded_channel();
        let token = shutdown.clone();
        tasks.spawn("polite", async move {
            token.cancelled().await;
            let _ = tx.send("flushed");
        });
        tasks.spawn("stubborn", std::future::pending());
        shutdown.cancel();
        let late = tasks.join(Duration::from_millis(50)).await;
        assert_eq!(late, ["stubborn"]);
        assert_eq!(rx.recv().await, Some("flushed"));
    }

    #[tokio::test]
    async fn no_restart_after_shutdown() {
        let shutdown = CancellationToken::new();
        let tasks = quick(shutdown.clone());
        shutdown.cancel();
        let runs = Arc::new(AtomicU32::new(0));
        let counter = Arc::clone(&runs);
        tasks.spawn_restarting("worker", move || {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                panic!("dies during shutdown");
            }
        });
        let report = loop {
            let r = tasks.report();
            if r.first().is_some_and(|r| r.state == TaskState::Failed) {
                break r;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(report[0].restarts, 0);
        assert!(tasks.join(Duration::from_secs(5)).await.is_empty());
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
