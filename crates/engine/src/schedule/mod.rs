//! Training windows in the engine: the scheduler service built from the config (sleep
//! hours, keyboard idle, calendar meetings), the pause the user controls, the gate
//! background learning waits on, and the words status uses.
//!
//! - [`Windows`]: the service (`try_start_step`, `pause`, `resume`, snapshots, events).
//! - [`StepGuard`]: one step of slow learning; the RL trainer's API (see [`step`]).
//! - [`Gate`]: skill evolution and memory consolidation wait on it when
//!   `scheduler.gate_background_learning` is on.

mod activity;
mod build;
pub mod gate;
pub mod offline;
pub mod parse;
mod service;
pub mod step;
#[cfg(test)]
mod tests;
pub mod text;
pub mod view;

use jiff::Timestamp;
use metaclaw_schedule::clock::Clock;
use metaclaw_schedule::pause::{Pause, PauseFile};

pub use activity::follow_requests;
pub use build::{idle_threshold, start};
pub use gate::{Gate, Permit, StopSignal};
pub use service::{PauseError, SourcesInfo, TICK, Windows};
pub use step::StepGuard;
pub use view::SchedulerStatus;

use crate::paths::Paths;

/// `$METACLAW_HOME/scheduler/pause.json`: read at start, written by pause and resume
/// (by the running engine, or by the CLI directly when MetaClaw is not running).
pub fn pause_file(paths: &Paths) -> PauseFile {
    PauseFile::new(paths.home.join("scheduler").join("pause.json"))
}

/// The saved pause, and why it could not be read, if so.
///
/// A file that cannot be read or parsed pauses learning until the user resumes, with an
/// error in the log and in status; the file is left for the user to inspect. Refusing to
/// start would take chat down over a learning setting, and starting unpaused would learn
/// while the user had (most likely) asked us not to. `resume` or a new pause replaces it.
pub(crate) fn load_pause(file: &PauseFile, clock: &dyn Clock) -> (Option<Pause>, Option<String>) {
    match file.load() {
        Ok(pause) => (pause, None),
        Err(e) => {
            let problem = format!(
                "{e}; learning stays paused until you resume (`metaclaw resume`) or pause again"
            );
            tracing::error!("{problem}");
            let pause = Pause {
                since: clock.now(),
                until: None,
            };
            (Some(pause), Some(problem))
        }
    }
}

/// Whether a saved pause is still in force at `now`.
pub fn active(pause: Option<Pause>, now: Timestamp) -> Option<Pause> {
    pause.filter(|p| p.is_active(now))
}
