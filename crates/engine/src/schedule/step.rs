//! One step of slow learning, as its owner holds it.
//!
//! This is the API the RL trainer (and the background-learning gate) uses:
//!
//! ```ignore
//! match windows.try_start_step("rl.trainer") {
//!     Ok(step) => {
//!         tokio::select! {
//!             done = train_one_step(&batch) => { /* keep the result */ }
//!             () = step.stopped() => { /* the user is back: keep the partial batch */ }
//!         }
//!         // `step` dropped here: the scheduler learns the step is over.
//!     }
//!     Err(not_now) => tracing::debug!("no training: {not_now}"),
//! }
//! ```
//!
//! - `try_start_step` never waits: it says yes (a window is open, long enough, not paused,
//!   no other step) or why not ([`NotNow`](metaclaw_schedule::machine::NotNow) prints a
//!   sentence). To wait for a window, use [`super::Gate::permit`].
//! - When the window closes (the user returns, the sleep hours or the meeting end) or the
//!   user pauses, the guard's token is cancelled within one tick (2 s). Stop at the next
//!   safe point — a gradient step in flight may finish — and keep the partial batch for the
//!   next window. Chat is never blocked either way.
//! - Dropping the guard reports the step done, whether it finished or stopped. Until then
//!   no other step may start, so drop it promptly after stopping.

use std::sync::Weak;

use metaclaw_schedule::machine::Step;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use super::service::Inner;

/// A running step. See the module docs.
pub struct StepGuard {
    id: u64,
    stop: CancellationToken,
    /// Weak: a step outliving the engine must not keep the scheduler alive.
    scheduler: Weak<Inner>,
}

impl StepGuard {
    pub(super) fn new(step: Step, scheduler: Weak<Inner>) -> StepGuard {
        StepGuard {
            id: step.id,
            stop: step.stop,
            scheduler,
        }
    }

    /// Completes when the step must stop (the window closed or the user paused).
    pub fn stopped(&self) -> WaitForCancellationFuture<'_> {
        self.stop.cancelled()
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// The token itself, to hand to code that takes one.
    pub fn token(&self) -> CancellationToken {
        self.stop.clone()
    }

    pub fn id(&self) -> u64 {
        self.id
    }
}

impl std::fmt::Debug for StepGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepGuard")
            .field("id", &self.id)
            .field("stopped", &self.is_stopped())
            .finish()
    }
}

impl Drop for StepGuard {
    fn drop(&mut self) {
        let Some(inner) = self.scheduler.upgrade() else {
            return;
        };
        let (events, snapshot) = {
            let mut m = inner.lock();
            (m.step_done(self.id), m.snapshot())
        };
        inner.publish(events, snapshot);
    }
}
