//! After "Restart MetaClaw": the stopped app becomes the new program file (a package upgrade
//! replaced it), with the same arguments and environment, so the same home, config and
//! keychain entries.

use std::process::Command;

use crate::exit::Failure;

/// Replaces this process with the program file now at its path; returns only on failure.
pub fn relaunch() -> Failure {
    let Some(exe) = metaclaw_updates::ExeWatch::process() else {
        return Failure::error("cannot find MetaClaw's program file to restart into");
    };
    let mut command = Command::new(exe.path());
    command.args(std::env::args_os().skip(1));
    tracing::info!(path = %exe.path().display(), "running the new version");
    #[cfg(unix)]
    let error = {
        use std::os::unix::process::CommandExt;
        command.exec()
    };
    #[cfg(not(unix))]
    let error = match command.spawn() {
        Ok(_) => std::process::exit(0),
        Err(e) => e,
    };
    Failure::error(format!(
        "cannot restart into {}: {error} (start MetaClaw again from the menu)",
        exe.path().display()
    ))
}
