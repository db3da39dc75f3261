//! Keyboard/mouse idle from the X server (XScreenSaver extension, via `user-idle`).
//!
//! `user-idle` calls `XOpenDisplay(NULL)` and uses the result unchecked, so a missing, dead or
//! refusing display crashes the process (a NULL dereference). Every query is therefore preceded
//! by our own check, in plain Rust over the display's socket: the X connection handshake
//! (with the Xauthority cookie Xlib would send) must succeed and the server must have the
//! MIT-SCREEN-SAVER extension. Only then does `user-idle` run — with the checked connection
//! still open, so the server cannot reset in between — on a helper thread with a deadline, so a
//! hung server cannot stall the scheduler. What remains is a server dying in the instant
//! between our check and `XOpenDisplay`; closing that too needs Xlib directly (`x11` crate,
//! with `XSetIOErrorHandler`) instead of `user-idle`.
//!
//! `user-idle` can only read `$DISPLAY` (there is no way to name a display), so an `X11Idle`
//! is only built for the display `$DISPLAY` names, and refuses to query if `$DISPLAY` changed.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use super::IdleProbe;
use super::bounded::{self, TIMEOUT};

/// A `user-idle` call is running. One at a time in the whole process: Xlib is not set up for
/// threads (nobody calls `XInitThreads`), and a hung call must not pile up more threads.
static QUERYING: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// Keyboard/mouse idle time from the X server `$DISPLAY` names.
#[derive(Debug)]
pub struct X11Idle {
    display: String,
}

impl X11Idle {
    /// The X server named by `$DISPLAY`, if one answers there and supports XScreenSaver.
    pub fn connect() -> Option<X11Idle> {
        Self::try_connect().ok()
    }

    /// Like [`X11Idle::connect`], saying why not.
    pub fn try_connect() -> Result<X11Idle, String> {
        match std::env::var("DISPLAY") {
            Ok(d) if !d.is_empty() => Self::try_connect_to(&d),
            _ => Err("$DISPLAY is not set".to_owned()),
        }
    }

    /// The X server at `display`, if one answers there, supports XScreenSaver, and `display`
    /// is what `$DISPLAY` says (the only display `user-idle` can query).
    pub fn connect_to(display: &str) -> Option<X11Idle> {
        Self::try_connect_to(display).ok()
    }

    /// Like [`X11Idle::connect_to`], saying why not.
    pub fn try_connect_to(display: &str) -> Result<X11Idle, String> {
        // The server check first: for a display nobody serves this is the answer, whatever
        // `$DISPLAY` says.
        x11_server_answers(display)?;
        env_names(display)?;
        Ok(X11Idle {
            display: display.to_owned(),
        })
    }

    pub fn display(&self) -> &str {
        &self.display
    }
}

fn env_names(display: &str) -> Result<(), String> {
    match std::env::var("DISPLAY") {
        Ok(d) if d == display => Ok(()),
        Ok(d) => Err(format!(
            "$DISPLAY is {d:?}, not {display:?} (user-idle can only query $DISPLAY)"
        )),
        Err(_) => Err(format!(
            "$DISPLAY is not set, not {display:?} (user-idle can only query $DISPLAY)"
        )),
    }
}

impl IdleProbe for X11Idle {
    fn idle_for(&self) -> Result<Duration, String> {
        // Re-checked on every query: the session may have ended since `connect`, and
        // `user-idle` on a vanished display is a crash, not an error.
        env_names(&self.display)?;
        let held = checked_connection(&self.display)?;
        bounded::run("x11-idle", &QUERYING, move || {
            // Our checked client stays connected until user-idle is done.
            let _held = held;
            user_idle::UserIdle::get_time()
                .map(|t| t.duration())
                .map_err(|e| format!("XScreenSaverQueryInfo failed: {e}"))
        })
        .map_err(|e| format!("X server {}: {e}", self.display))
    }

    fn name(&self) -> &'static str {
        "x11"
    }
}

/// Whether an X server answers at `display` (`:0`, `:1.0`, `unix:0`, `localhost:10.0`,
/// `host:0`), accepts this user (Xauthority cookie), and has the MIT-SCREEN-SAVER extension.
/// Plain Rust over the socket with a short timeout: safe to call when nothing listens.
pub fn x11_server_answers(display: &str) -> Result<(), String> {
    checked_connection(display).map(drop)
}

/// The checked connection, held open while `user-idle` runs: an X server resets when its last
/// client leaves and refuses connections until it is back, so without a client of our own it
/// could reset between the check and `XOpenDisplay` — a crash (seen under Xvfb).
#[cfg(target_os = "linux")]
fn checked_connection(display: &str) -> Result<wire::Connection, String> {
    wire::connect(display, TIMEOUT)
}

#[cfg(not(target_os = "linux"))]
fn checked_connection(_display: &str) -> Result<(), String> {
    // user-idle uses the platform's own idle API off Linux, not X11.
    Err("X11 idle detection is only used on Linux".to_owned())
}

#[cfg(target_os = "linux")]
mod wire;
