//! The desktop app and an engine already running for the same `$METACLAW_HOME` (started with
//! `metaclaw start --daemon`, as `install.sh` does without a display): the app takes it over.
//! It stops that engine cleanly (open sessions end, recorded turns are flushed, the same path
//! as `metaclaw stop`) and starts its own in-process engine on the same port, so agents keep
//! their address; requests in the moment between get "connection refused", which agents'
//! clients retry.
//!
//! Why take over rather than attach: the tray and the window drive the engine in-process
//! (the training windows, restarts, the WeChat login), and one engine owned by the app the
//! user sees is one code path instead of two. What the daemon was started with for one run
//! (`--mode`) is not carried over; its port is.

use metaclaw_engine::paths::Paths;
use metaclaw_engine::runfiles::RunInfo;

use crate::commands::stop;
use crate::exit::Failure;

/// The engine that was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TakenOver {
    pub pid: u32,
    /// The port it listened on, which the app's engine takes.
    pub port: Option<u16>,
}

/// Stops the engine running for `paths`, if one runs.
pub fn take_over(paths: &Paths) -> Result<Option<TakenOver>, Failure> {
    let Some(info) = RunInfo::read(paths)?.filter(RunInfo::is_alive) else {
        return Ok(None);
    };
    tracing::info!(
        pid = info.pid,
        "an engine already runs for this home; the desktop app takes it over"
    );
    let pid = stop::stop_engine(paths)?;
    Ok(Some(TakenOver {
        pid,
        port: info.port,
    }))
}
