//! The gate background learning (skill evolution, memory consolidation) passes when
//! `scheduler.gate_background_learning` is on: work waits for an open window, runs under a
//! step permit, and stops at its next safe point when the window closes, leaving what is
//! left for the next window. With the gate off (the default) work runs at once, as before.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use super::service::Windows;
use super::step::StepGuard;
use crate::supervise::Supervisor;

/// Re-check for a window at least this often even if no change was announced (a missed
/// wake-up costs at most this).
const RECHECK: Duration = Duration::from_secs(30);

#[derive(Clone, Default)]
pub struct Gate {
    /// `None`: not gated.
    windows: Option<Windows>,
}

impl Gate {
    /// Work runs whenever there is work (gate off).
    pub fn ungated() -> Gate {
        Gate { windows: None }
    }

    /// Work waits for `windows` to open.
    pub fn new(windows: Windows) -> Gate {
        Gate {
            windows: Some(windows),
        }
    }

    pub fn is_gated(&self) -> bool {
        self.windows.is_some()
    }

    /// Waits until `owner` may run a step, and returns the permit (at once when ungated).
    /// Cancel-safe: dropping the future while it waits takes no step.
    pub async fn permit(&self, owner: &str) -> Permit {
        let Some(windows) = &self.windows else {
            return Permit::free();
        };
        let mut changes = windows.watch();
        loop {
            changes.mark_unchanged();
            match windows.try_start_step(owner) {
                Ok(step) => return Permit { step: Some(step) },
                Err(why) => tracing::debug!(owner, "waiting for a training window: {why}"),
            }
            // A tick, a pause, a resume or another step's end publishes a change.
            let _ = tokio::time::timeout(RECHECK, changes.changed()).await;
        }
    }
}

/// Leave to run now: a step of the scheduler when gated, unbounded otherwise.
#[derive(Debug)]
pub struct Permit {
    step: Option<StepGuard>,
}

impl Permit {
    /// No window needed (gate off, or work the user asked for explicitly).
    pub fn free() -> Permit {
        Permit { step: None }
    }

    /// Completes when the work must stop; never for a free permit.
    pub async fn stopped(&self) {
        match &self.step {
            Some(step) => step.stopped().await,
            None => std::future::pending().await,
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.step.as_ref().is_some_and(StepGuard::is_stopped)
    }

    /// An owned handle on the stop signal, for work that outlives a borrow of the permit.
    pub fn signal(&self) -> StopSignal {
        StopSignal(self.step.as_ref().map(StepGuard::token))
    }
}

/// The stop signal of a [`Permit`], owned.
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Option<tokio_util::sync::CancellationToken>);

impl StopSignal {
    /// Never stops.
    pub fn never() -> StopSignal {
        StopSignal(None)
    }

    /// Completes when the work must stop; never for [`StopSignal::never`].
    pub async fn stopped(&self) {
        match &self.0 {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }
}

/// Keys of work held for the next window (scopes to consolidate, sessions to evolve on),
/// each once however often it is asked for.
pub struct Held<K> {
    keys: Mutex<BTreeSet<K>>,
    added: Notify,
}

impl<K: Ord + Clone> Default for Held<K> {
    fn default() -> Self {
        Held {
            keys: Mutex::new(BTreeSet::new()),
            added: Notify::new(),
        }
    }
}

impl<K: Ord + Clone> Held<K> {
    pub fn add(&self, key: K) {
        self.keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key);
        self.added.notify_one();
    }

    pub fn len(&self) -> usize {
        self.keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn take(&self) -> Option<K> {
        self.keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_first()
    }

    async fn wait_for_some(&self) {
        loop {
            let added = self.added.notified();
            if !self.is_empty() {
                return;
            }
            added.await;
        }
    }
}

/// What one piece of held work came to.
pub enum Done {
    /// Finished (or failed for good: it is not retried).
    Yes,
    /// Stopped early; hold it for the next window.
    Again,
    /// The worker is gone: stop the loop.
    End,
}

/// Runs held work in windows, one key at a time, until `work` says the worker is gone:
/// waits for a key, then for a permit, then takes keys until the permit is stopped (the
/// key in hand finishes or comes back). Spawned as its own task, so the worker that adds
/// keys never waits for a window.
pub fn run_in_windows<K, F, Fut>(
    tasks: &Supervisor,
    gate: Gate,
    owner: &'static str,
    held: Arc<Held<K>>,
    work: F,
) where
    K: Ord + Clone + Send + Sync + 'static,
    F: Fn(K, StopSignal) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Done> + Send,
{
    let work = Arc::new(work);
    let shutdown = tasks.shutdown_token();
    tasks.spawn_restarting(owner, move || {
        let (gate, held, work) = (gate.clone(), Arc::clone(&held), Arc::clone(&work));
        let shutdown = shutdown.clone();
        async move {
            loop {
                // Held work waits for the next start when the engine stops.
                let permit = tokio::select! {
                    permit = async {
                        held.wait_for_some().await;
                        gate.permit(owner).await
                    } => permit,
                    () = shutdown.cancelled() => return,
                };
                while !permit.is_stopped() {
                    let Some(key) = held.take() else {
                        break;
                    };
                    match work(key.clone(), permit.signal()).await {
                        Done::Yes => {}
                        Done::Again => held.add(key),
                        Done::End => return,
                    }
                }
                if !held.is_empty() {
                    tracing::info!(
                        owner,
                        left = held.len(),
                        "training window closed; the rest waits for the next one"
                    );
                }
            }
        }
    });
}
