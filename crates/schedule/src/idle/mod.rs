//! The idle window source: the user has not touched keyboard or mouse for
//! `scheduler.idle_threshold_minutes`.
//!
//! Idle time is the desktop's own where one answers: GNOME's compositor, the freedesktop
//! screen saver API, a Wayland compositor's ext-idle-notify-v1, the X server (outside Wayland
//! sessions) or logind's idle hint, in that order (see [`detect`]); elsewhere it falls back
//! to the time since the last proxy request.
//!
//! Reading is cheap: after a reading of `t` below the threshold the window cannot open for
//! another `threshold - t` (idle time only grows by the clock, and input resets it), so the
//! desktop is not asked again until then; while the window is open (or the source failed),
//! every tick asks, so the user's return closes it within a tick.
//!
//! Agent traffic and keyboard idle are deliberately NOT combined. With a display, only
//! keyboard/mouse input counts as the user: an autonomous agent's own requests (heartbeats,
//! cron turns) are not the user, they are where training samples come from, and chat is never
//! blocked during a step (issue 6) — so the reference's stall ("training started while the
//! agent was busy and its requests hung") is fixed by not blocking, not by keeping the window
//! shut.
//! Combining would mean a chatty agent keeps the idle window closed forever. Only where no
//! display exists does the last proxy request stand in for the user, as a last resort.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;

use crate::clock::Clock;
use crate::source::{Reading, Reason, Source, Upcoming};

mod activity;
mod bounded;
#[cfg(target_os = "linux")]
mod dbus;
mod detect;
#[cfg(not(target_os = "linux"))]
mod os;
#[cfg(target_os = "linux")]
mod wayland;
#[cfg(target_os = "linux")]
mod x11;

pub use activity::{LastActivity, RequestIdle};
#[cfg(target_os = "linux")]
pub use dbus::{DbusIdle, Service};
pub use detect::{Detected, ORDER, SOURCE_ENV, system_probe};
#[cfg(not(target_os = "linux"))]
pub use os::OsIdle;
#[cfg(target_os = "linux")]
pub use wayland::WaylandIdle;
#[cfg(target_os = "linux")]
pub use x11::{X11Idle, x11_server_answers};

/// How long the user has been away from the keyboard, from one place.
pub trait IdleProbe: Send + Sync {
    /// Time since the user's last input. `Err` says why the probe cannot tell right now.
    fn idle_for(&self) -> Result<Duration, String>;

    /// Whether readings may be skipped while the window cannot open yet (see the module
    /// docs): true for sources that measure idle time by asking; false for one that is
    /// told when the threshold passes.
    fn paced(&self) -> bool {
        true
    }

    /// Short name for logs and status ("gnome-idle-monitor", "x11", "last-request"…).
    fn name(&self) -> &'static str;
}

/// The probe to use given the display probe (if any): the display alone when there is one —
/// agent traffic is not combined in (see the module docs) — else the last proxy request.
pub fn probe_for(
    display: Option<Box<dyn IdleProbe>>,
    last: LastActivity,
    clock: Arc<dyn Clock>,
) -> Box<dyn IdleProbe> {
    match display {
        Some(p) => p,
        None => Box::new(RequestIdle::new(last, clock)),
    }
}

/// The idle window source: open while the probe reports idle ≥ threshold.
pub struct IdleSource {
    probe: Box<dyn IdleProbe>,
    threshold: Duration,
    clock: Arc<dyn Clock>,
    /// The last probe error, so a broken probe is logged once, not on every read.
    last_error: Mutex<Option<String>>,
    /// Before this the window cannot open (the last reading was this far below the
    /// threshold): reads until then answer Closed without asking the desktop.
    not_before: Mutex<Option<Timestamp>>,
}

impl IdleSource {
    pub fn new(probe: Box<dyn IdleProbe>, threshold: Duration, clock: Arc<dyn Clock>) -> Self {
        IdleSource {
            probe,
            threshold,
            clock,
            last_error: Mutex::new(None),
            not_before: Mutex::new(None),
        }
    }

    pub fn probe_name(&self) -> &'static str {
        self.probe.name()
    }

    pub fn threshold(&self) -> Duration {
        self.threshold
    }

    /// When the user was last active, per the probe (for status: "idle since 10:42").
    pub fn idle_since(&self) -> Result<Timestamp, String> {
        let idle = self.probe.idle_for()?;
        let idle = jiff::SignedDuration::try_from(idle).map_err(|e| e.to_string())?;
        self.clock
            .now()
            .checked_sub(idle)
            .map_err(|e| e.to_string())
    }

    fn note_error(&self, detail: Option<&str>) {
        let Ok(mut last) = self.last_error.lock() else {
            return;
        };
        match (detail, last.as_deref()) {
            (Some(d), prev) if prev != Some(d) => {
                tracing::warn!(
                    probe = self.probe.name(),
                    detail = d,
                    "idle probe unavailable"
                );
                *last = Some(d.to_owned());
            }
            (None, Some(_)) => {
                tracing::info!(probe = self.probe.name(), "idle probe available again");
                *last = None;
            }
            _ => {}
        }
    }
}

impl Source for IdleSource {
    fn reason(&self) -> Reason {
        Reason::Idle
    }

    fn read(&self, _now: Timestamp) -> Reading {
        // The probe measures idle itself (the desktop's time, or its own clock for requests);
        // this clock only paces the readings.
        let now = self.clock.now();
        let Ok(mut not_before) = self.not_before.lock() else {
            return Reading::Unavailable {
                detail: "idle source state is poisoned".to_owned(),
            };
        };
        if not_before.is_some_and(|t| now < t) {
            return Reading::Closed;
        }
        *not_before = None;
        match self.probe.idle_for() {
            Ok(idle) => {
                self.note_error(None);
                if idle >= self.threshold {
                    Reading::Open { until: None }
                } else {
                    if self.probe.paced() {
                        let left = jiff::SignedDuration::try_from(self.threshold - idle).ok();
                        *not_before = left.and_then(|left| now.checked_add(left).ok());
                    }
                    Reading::Closed
                }
            }
            Err(e) => {
                let detail = format!("{}: {e}", self.probe.name());
                self.note_error(Some(&detail));
                Reading::Unavailable { detail }
            }
        }
    }

    fn next(&self, _now: Timestamp) -> Option<Upcoming> {
        // Nobody can predict when the user will step away.
        None
    }
}

#[cfg(test)]
mod tests;
