//! `metaclaw stop`: ask the engine to shut down cleanly and wait until it has.

use std::time::{Duration, Instant};

use metaclaw_engine::paths::Paths;
use metaclaw_engine::runfiles::pid_alive;

use crate::admin_client::AdminClient;
use crate::exit::{Failure, Outcome};
use crate::output;

const GRACE: Duration = Duration::from_secs(20);

pub fn run(paths: &Paths) -> Outcome {
    let pid = stop_engine(paths)?;
    output::line(format!("MetaClaw stopped (PID {pid})."));
    Ok(())
}

/// Asks the running engine to shut down and waits until its process is gone (its run files
/// are cleared a moment before it exits, its instance lock only at exit). Returns its PID.
pub fn stop_engine(paths: &Paths) -> Result<u32, Failure> {
    let client = AdminClient::connect(paths)?;
    let pid = client.pid;
    let runtime = crate::admin_client::runtime()?;
    if let Err(e) = runtime.block_on(client.post("/api/shutdown")) {
        return Err(Failure::error(format!(
            "{}; stop it with `kill {pid}`",
            e.message
        )));
    }
    let deadline = Instant::now() + GRACE;
    while pid_alive(pid) {
        if Instant::now() >= deadline {
            return Err(Failure::error(format!(
                "MetaClaw (PID {pid}) is still running after {} s",
                GRACE.as_secs()
            )));
        }
        // Waiting for another process to exit: nothing to await but its absence.
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(pid)
}
