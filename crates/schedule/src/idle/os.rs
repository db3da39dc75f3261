//! Keyboard/mouse idle from the operating system where there is no X11 or D-Bus to ask:
//! IOKit's `HIDIdleTime` on macOS and `GetLastInputInfo` on Windows, both through
//! `user-idle`. A local call that cannot hang; bounded all the same, like every probe.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::IdleProbe;
use super::bounded;

#[cfg(target_os = "macos")]
pub const NAME: &str = "macos-hid-idle";
#[cfg(windows)]
pub const NAME: &str = "windows-last-input";
#[cfg(not(any(target_os = "macos", windows)))]
pub const NAME: &str = "os-idle";

#[derive(Debug, Default)]
pub struct OsIdle {
    busy: Arc<AtomicBool>,
}

impl OsIdle {
    /// The operating system's idle time, if it answers now.
    pub fn try_connect() -> Result<OsIdle, String> {
        let probe = OsIdle::default();
        probe.idle_for().map(|_| probe)
    }
}

impl IdleProbe for OsIdle {
    fn idle_for(&self) -> Result<Duration, String> {
        bounded::run(NAME, &self.busy, || {
            user_idle::UserIdle::get_time()
                .map(|t| t.duration())
                .map_err(|e| format!("the system's idle time: {e}"))
        })
    }

    fn name(&self) -> &'static str {
        NAME
    }
}
