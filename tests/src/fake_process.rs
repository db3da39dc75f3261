//! The lifetime of a fake run as its own process (`fake-upstream`, `fake-tinker`): tell the
//! parent the port, then serve until SIGTERM/SIGINT or until standard input closes when it is
//! a pipe, socket or terminal (so a parent that dies takes the fake with it; `/dev/null` as
//! stdin does not end it).

use std::io::{IsTerminal, Write};
use std::os::unix::fs::FileTypeExt;

use tokio::io::AsyncReadExt;
use tokio::signal::unix::{SignalKind, signal};

/// Prints `PORT=<port>` on stdout, then waits for the signal to stop.
pub async fn announce_and_wait(port: u16) -> std::io::Result<()> {
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "PORT={port}")?;
        out.flush()?;
    }
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
        () = stdin_closed() => {}
    }
    Ok(())
}

/// Resolves when stdin reaches end of file, or never if stdin cannot signal a parent's exit.
async fn stdin_closed() {
    let watchable = std::io::stdin().is_terminal()
        || std::fs::metadata("/proc/self/fd/0")
            .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket());
    if !watchable {
        return std::future::pending().await;
    }
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 256];
    while let Ok(n) = stdin.read(&mut buf).await {
        if n == 0 {
            break;
        }
    }
}
