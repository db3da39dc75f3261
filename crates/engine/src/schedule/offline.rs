//! Pause, resume and status while MetaClaw is not running: the pause file is written
//! directly (the engine reads it at start), and status is computed from the config with
//! the sleep hours alone — idle and calendar are read only by the running engine.

use std::sync::Arc;

use jiff::Timestamp;
use metaclaw_schedule::ScheduleError;
use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::machine::Scheduler;
use metaclaw_schedule::pause::Pause;
use metaclaw_schedule::source::Source;

use super::service::SourcesInfo;
use super::view::{Extra, SchedulerStatus};
use crate::config::Config;
use crate::paths::Paths;

/// Saves a pause until `until` (`None`: until resumed); a pause already saved keeps its
/// start. Returns what was saved.
pub fn pause(paths: &Paths, until: Option<Timestamp>) -> Result<Pause, ScheduleError> {
    let file = super::pause_file(paths);
    let now = SystemClock.now();
    let since = file
        .load()
        .ok()
        .flatten()
        .filter(|p| p.is_active(now))
        .map_or(now, |p| p.since);
    let pause = Pause { since, until };
    file.save(&pause)?;
    Ok(pause)
}

/// Removes the saved pause. True if a pause was in force.
pub fn resume(paths: &Paths) -> Result<bool, ScheduleError> {
    let file = super::pause_file(paths);
    let was = file
        .load()
        .map(|p| p.is_some_and(|p| p.is_active(SystemClock.now())))
        .unwrap_or(true);
    file.clear()?;
    Ok(was)
}

/// Status from the config and the pause file, as the engine would start with it.
pub fn status(paths: &Paths, config: &Config) -> SchedulerStatus {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let mut info = SourcesInfo {
        idle_threshold_minutes: config.scheduler.idle_threshold_minutes,
        ..SourcesInfo::default()
    };
    let mut sources: Vec<Box<dyn Source>> = Vec::new();
    match super::build::sleep_source(config, clock.clone()) {
        Ok(sleep) => {
            info.sleep_hours = Some(format!(
                "{}–{}",
                config.scheduler.sleep_start, config.scheduler.sleep_end
            ));
            sources.push(Box::new(sleep));
        }
        Err(problem) => info.problems.push(problem),
    }
    let (pause, pause_problem) = super::load_pause(&super::pause_file(paths), clock.as_ref());
    let mut machine = Scheduler::new(
        clock.clone(),
        sources,
        super::build::min_window(config),
        pause,
    );
    machine.tick();
    SchedulerStatus::new(
        &machine.snapshot(),
        Extra {
            info: &info,
            pause_problem,
            gate: config.scheduler.gate_background_learning,
            running: false,
            tz: clock.time_zone(),
        },
    )
}
