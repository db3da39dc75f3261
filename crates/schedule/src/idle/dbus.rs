//! Keyboard/mouse idle from the desktop over D-Bus, for Wayland sessions (and X11 ones that
//! offer it): GNOME's compositor (`org.gnome.Mutter.IdleMonitor`), the freedesktop screen
//! saver API (`org.freedesktop.ScreenSaver`, KDE on X11 and others), and systemd-logind's
//! session idle hint. Each query is a method call on one connection kept for the probe's
//! life, bounded by [`bounded::run`]; nothing subscribes to signals, so a probe costs no
//! wake-up between readings.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zbus::blocking::Connection;
use zbus::zvariant::OwnedValue;

use super::IdleProbe;
use super::bounded;

/// Which desktop service a [`DbusIdle`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// GNOME (Mutter): `GetIdletime`, milliseconds since the last input, on the session bus.
    GnomeIdleMonitor,
    /// `org.freedesktop.ScreenSaver.GetSessionIdleTime` on the session bus. KDE (its
    /// implementer that matters) answers milliseconds, and refuses the call in a Wayland
    /// session, where KWin offers ext-idle-notify instead.
    ScreenSaver,
    /// The session's `IdleHint` and `IdleSinceHint` from systemd-logind on the system bus.
    /// Coarse (the desktop sets the hint after its own idle delay, a TTY session from the
    /// terminal's last use) but present nearly everywhere systemd is.
    Logind,
}

impl Service {
    /// The name status shows.
    pub fn name(self) -> &'static str {
        match self {
            Service::GnomeIdleMonitor => "gnome-idle-monitor",
            Service::ScreenSaver => "freedesktop-screensaver",
            Service::Logind => "logind",
        }
    }
}

const MUTTER: (&str, &str, &str) = (
    "org.gnome.Mutter.IdleMonitor",
    "/org/gnome/Mutter/IdleMonitor/Core",
    "org.gnome.Mutter.IdleMonitor",
);
const SCREENSAVER: &str = "org.freedesktop.ScreenSaver";
/// The spec's path first; KDE serves the same interface at `/ScreenSaver` too.
const SCREENSAVER_PATHS: [&str; 2] = ["/org/freedesktop/ScreenSaver", "/ScreenSaver"];
const LOGIND: &str = "org.freedesktop.login1";
const LOGIND_SESSION: &str = "org.freedesktop.login1.Session";
/// The caller's own session.
const LOGIND_AUTO: &str = "/org/freedesktop/login1/session/auto";

/// Idle time from a desktop service over D-Bus.
pub struct DbusIdle {
    service: Service,
    conn: Connection,
    /// The object answering (the screen saver has two usual paths; logind's session).
    path: String,
    busy: Arc<AtomicBool>,
}

impl std::fmt::Debug for DbusIdle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbusIdle")
            .field("service", &self.service)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl DbusIdle {
    /// The service, if its bus is reachable and it answers an idle query now; else why not.
    pub fn connect(service: Service) -> Result<DbusIdle, String> {
        let busy = Arc::new(AtomicBool::new(false));
        let system = service == Service::Logind;
        let conn = bounded::run("dbus-connect", &busy, move || {
            let conn = if system {
                Connection::system()
            } else {
                Connection::session()
            };
            conn.map_err(|e| {
                let bus = if system { "system" } else { "session" };
                format!("no {bus} bus: {e}")
            })
        })?;
        let paths: Vec<String> = match service {
            Service::GnomeIdleMonitor => vec![MUTTER.1.to_owned()],
            Service::ScreenSaver => SCREENSAVER_PATHS.iter().map(|p| (*p).to_owned()).collect(),
            Service::Logind => logind_sessions(),
        };
        let mut why = Vec::new();
        for path in paths {
            let probe = DbusIdle {
                service,
                conn: conn.clone(),
                path,
                busy: Arc::clone(&busy),
            };
            match probe.idle_for() {
                Ok(_) => return Ok(probe),
                Err(e) => why.push(e),
            }
        }
        Err(why.join("; "))
    }

    pub fn service(&self) -> Service {
        self.service
    }

    fn query(&self) -> Result<Duration, String> {
        let (conn, path, service) = (self.conn.clone(), self.path.clone(), self.service);
        bounded::run(service.name(), &self.busy, move || {
            read(&conn, &path, service)
        })
    }
}

impl IdleProbe for DbusIdle {
    fn idle_for(&self) -> Result<Duration, String> {
        self.query()
    }

    fn name(&self) -> &'static str {
        self.service.name()
    }
}

fn read(conn: &Connection, path: &str, service: Service) -> Result<Duration, String> {
    match service {
        Service::GnomeIdleMonitor => {
            let ms: u64 = call(conn, MUTTER.0, path, MUTTER.2, "GetIdletime")?;
            Ok(Duration::from_millis(ms))
        }
        Service::ScreenSaver => {
            let ms: u32 = call(conn, SCREENSAVER, path, SCREENSAVER, "GetSessionIdleTime")?;
            Ok(Duration::from_millis(u64::from(ms)))
        }
        Service::Logind => {
            let idle: bool = property(conn, path, "IdleHint")?;
            if !idle {
                return Ok(Duration::ZERO);
            }
            // Microseconds of the wall clock when the session went idle.
            let since: u64 = property(conn, path, "IdleSinceHint")?;
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_err(|e| e.to_string())?;
            Ok(now.saturating_sub(Duration::from_micros(since)))
        }
    }
}

fn call<T>(
    conn: &Connection,
    dest: &str,
    path: &str,
    iface: &str,
    method: &str,
) -> Result<T, String>
where
    T: for<'d> serde::Deserialize<'d> + zbus::zvariant::Type,
{
    let reply = conn
        .call_method(Some(dest), path, Some(iface), method, &())
        .map_err(|e| format!("{dest} {method}: {}", short(&e)))?;
    reply
        .body()
        .deserialize::<T>()
        .map_err(|e| format!("{dest} {method} answered an unexpected type: {e}"))
}

fn property<T>(conn: &Connection, path: &str, name: &str) -> Result<T, String>
where
    T: TryFrom<OwnedValue>,
    <T as TryFrom<OwnedValue>>::Error: std::fmt::Display,
{
    let reply = conn
        .call_method(
            Some(LOGIND),
            path,
            Some("org.freedesktop.DBus.Properties"),
            "Get",
            &(LOGIND_SESSION, name),
        )
        .map_err(|e| format!("{LOGIND} {name} of {path}: {}", short(&e)))?;
    let value: OwnedValue = reply
        .body()
        .deserialize()
        .map_err(|e| format!("{LOGIND} {name}: {e}"))?;
    T::try_from(value).map_err(|e| format!("{LOGIND} {name} has an unexpected type: {e}"))
}

/// logind's session for this process: `auto` (the caller's own), then the one
/// `$XDG_SESSION_ID` names (a process started outside the session, by a user service).
fn logind_sessions() -> Vec<String> {
    let mut paths = vec![LOGIND_AUTO.to_owned()];
    if let Ok(id) = std::env::var("XDG_SESSION_ID")
        && !id.is_empty()
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        paths.push(format!("/org/freedesktop/login1/session/{}", escape(&id)));
    }
    paths
}

/// logind's object-path escaping for a session id (digits lead with `_3`).
fn escape(id: &str) -> String {
    let mut out = String::new();
    for (i, c) in id.chars().enumerate() {
        if c.is_ascii_alphabetic() || (c.is_ascii_digit() && i > 0) {
            out.push(c);
        } else {
            out.push_str(&format!("_{:02x}", c as u32));
        }
    }
    out
}

/// A D-Bus error in one line: its name and message, not the whole debug form.
fn short(e: &zbus::Error) -> String {
    match e {
        zbus::Error::MethodError(name, msg, _) => match msg {
            Some(m) => format!("{} ({m})", name.as_str()),
            None => name.as_str().to_owned(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_escaped_as_logind_does() {
        assert_eq!(escape("c2"), "c2");
        assert_eq!(escape("2"), "_32");
        assert_eq!(escape("12"), "_312");
    }
}
