//! The service as the config describes it: sleep hours, keyboard idle (or the time since the
//! last proxy request where no display exists), calendar meetings when connected, and the
//! saved pause.

use std::sync::Arc;
use std::time::Duration;

use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::idle::{IdleSource, LastActivity, system_probe};
use metaclaw_schedule::sleep::SleepHours;
use metaclaw_schedule::source::Source;

use super::service::{SourcesInfo, Windows};
use crate::config::Config;
use crate::paths::Paths;
use crate::secrets::SecretStore;
use crate::supervise::Supervisor;

/// Overrides `scheduler.idle_threshold_minutes`, in milliseconds (tests).
pub const IDLE_ENV: &str = "METACLAW_IDLE_THRESHOLD_MS";

/// Builds the service and starts ticking it until the engine stops. `last` is the proxy's last
/// request, touched by [`super::follow_requests`]. Runs in every mode: status shows the
/// windows everywhere, and only `madmax` (and the gate, when on) act on them.
pub fn start(
    config: &Config,
    paths: &Paths,
    secrets: &SecretStore,
    last: LastActivity,
    tasks: &Supervisor,
) -> Windows {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let (mut sources, mut info) = local_sources(config, last, clock.clone());
    if let Some(calendar) = crate::calendar::start(config, paths, secrets, tasks) {
        sources.push(calendar);
        info.calendar = true;
    }
    let windows = Windows::new(
        clock,
        sources,
        min_window(config),
        super::pause_file(paths),
        info,
    );
    windows.spawn_ticker(tasks, idle_threshold(config) / 8);
    windows
}

/// `scheduler.idle_threshold_minutes`, or the test override in milliseconds.
pub fn idle_threshold(config: &Config) -> Duration {
    std::env::var(IDLE_ENV)
        .ok()
        .and_then(|ms| ms.parse::<u64>().ok())
        .map_or_else(
            || Duration::from_secs(u64::from(config.scheduler.idle_threshold_minutes) * 60),
            Duration::from_millis,
        )
}

/// `scheduler.min_window_minutes`.
pub(super) fn min_window(config: &Config) -> Duration {
    Duration::from_secs(u64::from(config.scheduler.min_window_minutes) * 60)
}

/// Sleep hours and idle. A sleep-hours setting the schedule crate refuses leaves that source
/// out (said in status and the log) rather than the whole scheduler.
fn local_sources(
    config: &Config,
    last: LastActivity,
    clock: Arc<dyn Clock>,
) -> (Vec<Box<dyn Source>>, SourcesInfo) {
    let s = &config.scheduler;
    let mut info = SourcesInfo {
        idle_threshold_minutes: s.idle_threshold_minutes,
        ..SourcesInfo::default()
    };
    let mut sources: Vec<Box<dyn Source>> = Vec::new();
    match sleep_source(config, clock.clone()) {
        Ok(sleep) => {
            info.sleep_hours = Some(format!("{}–{}", s.sleep_start, s.sleep_end));
            sources.push(Box::new(sleep));
        }
        Err(problem) => {
            tracing::error!("{problem}");
            info.problems.push(problem);
        }
    }
    // A minute is the shortest setting; tests that wait for an idle window set less.
    let threshold = idle_threshold(config);
    let detected = system_probe(last, clock.clone(), threshold);
    info.idle_passed_over = detected.passed_over;
    let idle = IdleSource::new(detected.probe, threshold, clock);
    info.idle_probe = Some(idle.probe_name().to_string());
    sources.push(Box::new(idle));
    (sources, info)
}

/// The sleep-hours source alone (also what the CLI reads while MetaClaw is stopped).
pub(super) fn sleep_source(config: &Config, clock: Arc<dyn Clock>) -> Result<SleepHours, String> {
    let s = &config.scheduler;
    SleepHours::new(
        (s.sleep_start.hour(), s.sleep_start.minute()),
        (s.sleep_end.hour(), s.sleep_end.minute()),
        clock,
    )
    .map_err(|e| format!("sleep hours are off: {e} (scheduler.sleep_start / sleep_end)"))
}
