//! Child processes the tests own: killed on drop; and a private D-Bus bus.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A process killed on drop.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A private bus (session configuration), used as the session or the system bus:
/// (daemon, address).
pub fn start_bus() -> (Killed, String) {
    let mut child = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon is required (scripts/deps.sh installs it)");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(!line.trim().is_empty(), "dbus-daemon printed no address");
    (Killed(child), line.trim().to_string())
}
