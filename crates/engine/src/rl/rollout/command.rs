//! Running one command of an episode: `sh -c` in the episode's scratch directory with an
//! emptied environment, a time limit, capped output, the whole process group killed on
//! timeout or shutdown.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// Output sent back to the model per command (stdout and stderr together).
const OUTPUT_CAP: usize = 8 * 1024;

/// Runs `command` with `sh -c` in `dir` and says what happened, for the model: `Output:` and
/// the text (stdout then stderr, capped), `(no output)`, or why it did not run or finish.
pub(super) async fn run_command(command: &str, dir: &Path, shutdown: &CancellationToken) -> String {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .env_clear()
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
        )
        .env("HOME", dir)
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so what the command started can be stopped with it.
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return format!("Error: the command could not be started: {e}"),
    };
    let pid = child.id();
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let finished = {
        let work = async {
            let (out, err, status) = tokio::join!(
                read_capped(stdout, OUTPUT_CAP),
                read_capped(stderr, OUTPUT_CAP),
                child.wait()
            );
            (out, err, status)
        };
        tokio::select! {
            () = shutdown.cancelled() => None,
            r = tokio::time::timeout(COMMAND_TIMEOUT, work) => Some(r),
        }
    };
    kill_group(pid);
    let _ = child.kill().await;
    match finished {
        None => "Error: stopped, MetaClaw is shutting down.".to_owned(),
        Some(Err(_)) => format!(
            "Error: the command did not finish within {} s and was stopped.",
            COMMAND_TIMEOUT.as_secs()
        ),
        Some(Ok((out, err, status))) => {
            let code = status.ok().and_then(|s| s.code());
            describe_output(&out, &err, code)
        }
    }
}

/// Up to `cap` bytes and whether there was more. Reading stops at the cap: the writer then
/// gets a broken pipe instead of filling memory.
async fn read_capped<R: AsyncRead + Unpin>(reader: Option<R>, cap: usize) -> (Vec<u8>, bool) {
    let Some(reader) = reader else {
        return (Vec::new(), false);
    };
    let mut buf = Vec::new();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let _ = reader.take(limit).read_to_end(&mut buf).await;
    let more = buf.len() > cap;
    buf.truncate(cap);
    (buf, more)
}

fn describe_output(out: &(Vec<u8>, bool), err: &(Vec<u8>, bool), code: Option<i32>) -> String {
    let mut text = String::from_utf8_lossy(&out.0).into_owned();
    let stderr = String::from_utf8_lossy(&err.0);
    if !stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&stderr);
    }
    let mut cut = out.1 || err.1;
    if text.len() > OUTPUT_CAP {
        let mut end = OUTPUT_CAP;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        cut = true;
    }
    let mut answer = if text.trim().is_empty() {
        "(no output)".to_owned()
    } else {
        format!("Output:\n{text}")
    };
    if cut {
        answer.push_str(&format!("\n[output cut at {} KiB]", OUTPUT_CAP / 1024));
    }
    match code {
        Some(0) => {}
        Some(c) => answer.push_str(&format!("\n[exit status {c}]")),
        None => answer.push_str("\n[ended by a signal]"),
    }
    answer
}

#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    let pid = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        // Gone already (ESRCH) is the usual case.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: Option<u32>) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_described_and_capped() {
        assert_eq!(
            describe_output(&(b"hi\n".to_vec(), false), &(Vec::new(), false), Some(0)),
            "Output:\nhi\n"
        );
        assert_eq!(
            describe_output(&(Vec::new(), false), &(Vec::new(), false), Some(0)),
            "(no output)"
        );
        assert_eq!(
            describe_output(&(b"a".to_vec(), false), &(b"oops".to_vec(), false), Some(2)),
            "Output:\na\noops\n[exit status 2]"
        );
        let big = describe_output(
            &(vec![b'x'; OUTPUT_CAP], false),
            &(b"more".to_vec(), false),
            Some(0),
        );
        assert!(big.ends_with("[output cut at 8 KiB]"), "{big}");
        assert!(big.len() < OUTPUT_CAP + 64);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn commands_run_in_the_scratch_dir_without_the_engine_environment() {
        let dir = tempfile::tempdir().unwrap();
        let never = CancellationToken::new();
        // Cargo runs tests with CARGO_* set: none of it may reach the command.
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
        let out = run_command("pwd; echo \"home=$HOME\"; env", dir.path(), &never).await;
        let real = std::fs::canonicalize(dir.path()).unwrap();
        assert!(out.contains(&format!("{}\n", real.display())), "{out}");
        assert!(
            out.contains(&format!("home={}", dir.path().display())),
            "{out}"
        );
        assert!(!out.contains("CARGO_"), "{out}");
        assert!(out.contains("LANG=C.UTF-8"), "{out}");
        let big = run_command("yes", dir.path(), &never).await;
        assert!(big.contains("[output cut at 8 KiB]"), "{big}");
        let failed = run_command("exit 3", dir.path(), &never).await;
        assert_eq!(failed, "(no output)\n[exit status 3]");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn shutdown_stops_a_running_command() {
        let dir = tempfile::tempdir().unwrap();
        let stop = CancellationToken::new();
        stop.cancel();
        let out = run_command("sleep 100", dir.path(), &stop).await;
        assert!(out.contains("shutting down"), "{out}");
    }
}
