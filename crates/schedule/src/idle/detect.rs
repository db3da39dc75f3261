//! Which idle source this session gets, best first:
//!
//! 1. GNOME's compositor (`org.gnome.Mutter.IdleMonitor`): the compositor sees every input,
//!    Wayland or X11.
//! 2. The freedesktop screen saver API (`org.freedesktop.ScreenSaver`): KDE on X11 and others.
//! 3. The Wayland protocol `ext-idle-notify-v1`: wlroots compositors (Sway, Hyprland), KWin.
//! 4. The X server (XScreenSaver), outside Wayland sessions only: under Wayland `$DISPLAY` is
//!    XWayland, which sees only input sent to X11 windows.
//! 5. systemd-logind's idle hint for this session: coarse, set by the desktop after its own
//!    idle delay.
//! 6. The time since the last proxy request: not the user (a chatty agent keeps the window
//!    shut), so only where nothing native answers.
//!
//! On macOS and Windows the operating system answers (IOKit's `HIDIdleTime`,
//! `GetLastInputInfo`), then the last request.
//!
//! `METACLAW_IDLE_SOURCE` names one of them to use it alone (tests, or a desktop whose
//! better source misbehaves); when it cannot be used, the last request stands in, said so.

use std::sync::Arc;
use std::time::Duration;

use super::IdleProbe;
use super::activity::{LastActivity, RequestIdle};
#[cfg(target_os = "linux")]
use super::dbus::{DbusIdle, Service};
#[cfg(not(target_os = "linux"))]
use super::os::{self, OsIdle};
#[cfg(target_os = "linux")]
use super::wayland::{self, WaylandIdle};
#[cfg(target_os = "linux")]
use super::x11::X11Idle;
use crate::clock::Clock;

/// Forces one source by its name.
pub const SOURCE_ENV: &str = "METACLAW_IDLE_SOURCE";

/// The chosen source, and why each better one was passed over.
pub struct Detected {
    pub probe: Box<dyn IdleProbe>,
    /// `"<name>: <why not>"`, best first.
    pub passed_over: Vec<String>,
}

/// Every source's name, best first.
#[cfg(target_os = "linux")]
pub const ORDER: [&str; 6] = [
    "gnome-idle-monitor",
    "freedesktop-screensaver",
    wayland::NAME,
    "x11",
    "logind",
    "last-request",
];
/// Every source's name, best first.
#[cfg(not(target_os = "linux"))]
pub const ORDER: [&str; 2] = [os::NAME, "last-request"];

/// The best source that answers in this session; `threshold` is the idle time that opens a
/// window (a source that is told when it passes needs it).
pub fn system_probe(last: LastActivity, clock: Arc<dyn Clock>, threshold: Duration) -> Detected {
    let env = |k| std::env::var(k).ok();
    let forced = env(SOURCE_ENV).filter(|s| !s.trim().is_empty());
    let session = Session {
        wayland: wayland_session(env("WAYLAND_DISPLAY"), env("XDG_SESSION_TYPE")),
        threshold,
    };
    detect(
        forced.as_deref(),
        &mut |name| try_source(name, &session),
        last,
        clock,
    )
}

struct Session {
    /// Why X11 idle cannot be trusted here, when it cannot.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    wayland: Option<String>,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    threshold: Duration,
}

#[cfg(not(target_os = "linux"))]
fn try_source(name: &str, _session: &Session) -> Result<Box<dyn IdleProbe>, String> {
    if name == os::NAME {
        boxed(OsIdle::try_connect())
    } else {
        Err(format!(
            "no idle source is called {name:?} (one of: {})",
            ORDER.join(", ")
        ))
    }
}

#[cfg(target_os = "linux")]
fn try_source(name: &str, session: &Session) -> Result<Box<dyn IdleProbe>, String> {
    match name {
        "gnome-idle-monitor" => boxed(DbusIdle::connect(Service::GnomeIdleMonitor)),
        "freedesktop-screensaver" => boxed(DbusIdle::connect(Service::ScreenSaver)),
        wayland::NAME => boxed(WaylandIdle::connect(session.threshold)),
        "x11" => match &session.wayland {
            Some(why) => Err(why.clone()),
            None => boxed(X11Idle::try_connect()),
        },
        "logind" => boxed(DbusIdle::connect(Service::Logind)),
        other => Err(format!(
            "no idle source is called {other:?} (one of: {})",
            ORDER.join(", ")
        )),
    }
}

/// A source by name, or why it cannot be used.
type TrySource<'a> = &'a mut dyn FnMut(&str) -> Result<Box<dyn IdleProbe>, String>;

fn boxed<P: IdleProbe + 'static>(r: Result<P, String>) -> Result<Box<dyn IdleProbe>, String> {
    r.map(|p| Box::new(p) as Box<dyn IdleProbe>)
}

/// The detection itself, with `try_source` standing in for the desktop in tests.
fn detect(
    forced: Option<&str>,
    try_source: TrySource<'_>,
    last: LastActivity,
    clock: Arc<dyn Clock>,
) -> Detected {
    let mut passed_over = Vec::new();
    let candidates: Vec<&str> = match forced {
        Some(name) => vec![name.trim()],
        None => ORDER[..ORDER.len() - 1].to_vec(),
    };
    for name in candidates {
        if name == "last-request" {
            break;
        }
        match try_source(name) {
            Ok(probe) => {
                tracing::info!(
                    source = probe.name(),
                    passed_over = ?passed_over,
                    "idle detection: keyboard/mouse idle from the desktop; agent traffic does not count as the user"
                );
                return Detected { probe, passed_over };
            }
            Err(why) => passed_over.push(format!("{name}: {why}")),
        }
    }
    if let Some(name) = forced
        && name.trim() != "last-request"
    {
        passed_over.insert(0, format!("{SOURCE_ENV}={name} could not be used"));
    }
    tracing::info!(
        passed_over = ?passed_over,
        "idle detection: no desktop idle source answers; the time since the last proxy request stands in for the user"
    );
    Detected {
        probe: Box::new(RequestIdle::new(last, clock)),
        passed_over,
    }
}

/// Why X11 idle cannot be trusted in this session, if it cannot. Under Wayland `$DISPLAY` is
/// XWayland, which only sees input sent to X11 windows: typing into a native Wayland window
/// would read as idle and open a window while the user works.
pub(super) fn wayland_session(
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use jiff::tz::TimeZone;

    use super::*;
    use crate::clock::FakeClock;

    struct Named(&'static str);
    impl IdleProbe for Named {
        fn idle_for(&self) -> Result<Duration, String> {
            Ok(Duration::ZERO)
        }
        fn name(&self) -> &'static str {
            self.0
        }
    }

    fn run(forced: Option<&str>, answering: &[&'static str]) -> (Detected, Vec<String>) {
        let clock: Arc<dyn Clock> =
            Arc::new(FakeClock::new(jiff::Timestamp::UNIX_EPOCH, TimeZone::UTC));
        let mut asked = Vec::new();
        let d = detect(
            forced,
            &mut |name| {
                asked.push(name.to_owned());
                match answering.iter().find(|a| **a == name) {
                    Some(a) => Ok(Box::new(Named(a)) as Box<dyn IdleProbe>),
                    None => Err("not here".to_owned()),
                }
            },
            LastActivity::new(clock.now()),
            clock,
        );
        (d, asked)
    }

    #[test]
    fn the_best_answering_source_wins_and_the_better_ones_say_why_not() {
        let (d, asked) = run(None, &["x11", "logind"]);
        assert_eq!(d.probe.name(), "x11");
        assert_eq!(
            asked,
            [
                "gnome-idle-monitor",
                "freedesktop-screensaver",
                "ext-idle-notify",
                "x11"
            ]
        );
        assert_eq!(
            d.passed_over,
            [
                "gnome-idle-monitor: not here",
                "freedesktop-screensaver: not here",
                "ext-idle-notify: not here"
            ]
        );
        let (d, _) = run(None, &["gnome-idle-monitor", "x11"]);
        assert_eq!(d.probe.name(), "gnome-idle-monitor");
        assert!(d.passed_over.is_empty());
    }

    #[test]
    fn nothing_native_falls_back_to_the_last_request_saying_why() {
        let (d, asked) = run(None, &[]);
        assert_eq!(d.probe.name(), "last-request");
        assert_eq!(asked.len(), 5);
        assert_eq!(d.passed_over.len(), 5);
    }

    #[test]
    fn a_forced_source_is_the_only_one_tried() {
        let (d, asked) = run(Some("logind"), &["gnome-idle-monitor", "logind"]);
        assert_eq!(d.probe.name(), "logind");
        assert_eq!(asked, ["logind"]);
        let (d, asked) = run(Some("last-request"), &["gnome-idle-monitor"]);
        assert_eq!(d.probe.name(), "last-request");
        assert!(asked.is_empty() && d.passed_over.is_empty());
        let (d, _) = run(Some("x11"), &[]);
        assert_eq!(d.probe.name(), "last-request");
        assert_eq!(
            d.passed_over[0],
            "METACLAW_IDLE_SOURCE=x11 could not be used"
        );
    }

    #[test]
    fn wayland_sessions_are_recognised() {
        assert!(wayland_session(Some("wayland-0".into()), None).is_some());
        assert!(wayland_session(None, Some("Wayland".into())).is_some());
        assert!(wayland_session(Some(String::new()), Some("x11".into())).is_none());
    }
}
