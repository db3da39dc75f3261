//! The idle window source: the user has not touched keyboard or mouse for
//! `scheduler.idle_threshold_minutes`.
//!
//! Where an X server answers (outside Wayland sessions), idle time is the X server's own
//! (XScreenSaver, via `user-idle`); elsewhere it falls back to the time since the last proxy
//! request.
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
mod x11;

pub use activity::{LastActivity, RequestIdle};
pub use x11::{X11Idle, x11_server_answers};

/// How long the user has been away from the keyboard, from one place.
pub trait IdleProbe: Send + Sync {
    /// Time since the user's last input. `Err` says why the probe cannot tell right now.
    fn idle_for(&self) -> Result<Duration, String>;

    /// Short name for logs and status ("x11", "last-request").
    fn name(&self) -> &'static str;
}

/// The probe for this machine: X11 idle when `$DISPLAY` names a server that answers (and the
/// session is not Wayland), else the time since the last proxy request.
pub fn system_probe(last: LastActivity, clock: Arc<dyn Clock>) -> Box<dyn IdleProbe> {
    let env = |k| std::env::var(k).ok();
    let display = match wayland_session(env("WAYLAND_DISPLAY"), env("XDG_SESSION_TYPE")) {
        Some(why) => Err(why),
        None => X11Idle::try_connect(),
    };
    match display {
        Ok(x) => {
            tracing::info!(
                display = x.display(),
                "idle detection: X11 keyboard/mouse idle (XScreenSaver); agent traffic does not count as the user"
            );
            probe_for(Some(Box::new(x)), last, clock)
        }
        Err(why) => {
            tracing::info!(
                reason = %why,
                "idle detection: no usable X display, falling back to the time since the last proxy request"
            );
            probe_for(None, last, clock)
        }
    }
}

/// Why X11 idle cannot be trusted in this session, if it cannot. Under Wayland `$DISPLAY` is
/// XWayland, which only sees input sent to X11 windows: typing into a native Wayland window
/// would read as idle and open a window while the user works. Falling back errs toward not
/// training.
fn wayland_session(
    wayland_display: Option<String>,
    session_type: Option<String>,
) -> Option<String> {
    if wayland_display.is_some_and(|d| !d.is_empty()) {
        Some(
            "a Wayland session ($WAYLAND_DISPLAY is set): XWayland only sees input to X11 windows"
                .to_owned(),
        )
    } else if session_type.is_some_and(|t| t.eq_ignore_ascii_case("wayland")) {
        Some("a Wayland session ($XDG_SESSION_TYPE=wayland): XWayland only sees input to X11 windows".to_owned())
    } else {
        None
    }
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
}

impl IdleSource {
    pub fn new(probe: Box<dyn IdleProbe>, threshold: Duration, clock: Arc<dyn Clock>) -> Self {
        IdleSource {
            probe,
            threshold,
            clock,
            last_error: Mutex::new(None),
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
        // The probe measures idle itself (X server time, or its own clock for requests), so
        // `now` is not needed; X11Idle bounds its query, so this never blocks long.
        match self.probe.idle_for() {
            Ok(idle) => {
                self.note_error(None);
                if idle >= self.threshold {
                    Reading::Open { until: None }
                } else {
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
