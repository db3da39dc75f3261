//! One install or login: the plugin's command run with its output read line by line into
//! the log and the shared progress, bounded in time and stopped with the engine.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader, Lines};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::output::{self, Line};
use super::{Job, Wechat};
use crate::agents;

/// The plugin's login waits up to 8 minutes for a scan; an install adds the download.
const LOGIN_LIMIT: Duration = Duration::from_secs(10 * 60);
const INSTALL_LIMIT: Duration = Duration::from_secs(15 * 60);
/// Enough of a line to say why a command failed.
const DETAIL_CHARS: usize = 300;

pub(super) async fn run(wechat: Wechat, job: Job, stop: CancellationToken) {
    let ended = match attempt(&wechat, job, stop).await {
        Ok(()) => finish(job).await,
        Err(e) => Err(e),
    };
    match ended {
        Ok(note) => {
            tracing::info!(
                "WeChat {} finished",
                if job == Job::Install {
                    "plugin install"
                } else {
                    "login"
                }
            );
            wechat.update(|p| {
                p.running = false;
                p.done = true;
                p.note = note;
                // A login that exits 0 linked the account; an install did when it said so.
                p.connected |= job == Job::Login;
                p.qr_url = None;
            });
        }
        Err(e) => {
            tracing::warn!("WeChat: {e}");
            wechat.update(|p| {
                p.running = false;
                p.error = Some(e);
                p.qr_url = None;
            });
        }
    }
}

/// Runs the job's command to its end; `Err` says why it did not succeed.
async fn attempt(wechat: &Wechat, job: Job, stop: CancellationToken) -> Result<(), String> {
    let (argv, limit) = match job {
        Job::Install => (metaclaw_claws::wechat::install_command(), INSTALL_LIMIT),
        Job::Login => (metaclaw_claws::wechat::login_command(), LOGIN_LIMIT),
    };
    let env = agents::system_env().map_err(|e| e.to_string())?;
    let Some((program, args)) = argv.split_first() else {
        return Err("no command to run".into());
    };
    let Some(found) = env.which(program) else {
        return Err(missing(program));
    };
    let command = argv.join(" ");
    tracing::info!(%command, "WeChat: running");
    // The installer is code fetched from npm: it gets none of MetaClaw's own variables, which
    // can hold keys (`METACLAW_LLM_API_KEY`, `METACLAW_PROXY_API_KEY`).
    let mut std_command = std::process::Command::new(&found);
    metaclaw_claws::env::without_metaclaw_variables(&mut std_command);
    let mut child = Command::from(std_command)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Plain lines: no colour codes, no progress bars redrawn in place.
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0")
        .env("npm_config_progress", "false")
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run `{command}`: {e}"))?;
    let mut out = child.stdout.take().map(|s| BufReader::new(s).lines());
    let mut err = child.stderr.take().map(|s| BufReader::new(s).lines());
    let mut last = String::new();
    let deadline = tokio::time::sleep(limit);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            line = next(&mut out), if out.is_some() => match line {
                Some(line) => heard(wechat, &line, &mut last),
                None => out = None,
            },
            line = next(&mut err), if err.is_some() => match line {
                Some(line) => heard(wechat, &line, &mut last),
                None => err = None,
            },
            status = child.wait(), if out.is_none() && err.is_none() => {
                let status = status.map_err(|e| format!("`{command}` failed: {e}"))?;
                return if status.success() {
                    Ok(())
                } else {
                    Err(failed(&command, status.code(), &last))
                };
            }
            () = &mut deadline => {
                let _ = child.kill().await;
                return Err(format!(
                    "`{command}` did not finish within {} minutes and was stopped",
                    limit.as_secs() / 60
                ));
            }
            () = stop.cancelled() => {
                let _ = child.kill().await;
                return Err(format!("`{command}` was stopped because MetaClaw stopped"));
            }
        }
    }
}

/// The next line of a stream still open; `None` once it closed (or cannot be read).
async fn next<R: AsyncRead + Unpin>(lines: &mut Option<Lines<BufReader<R>>>) -> Option<String> {
    lines.as_mut()?.next_line().await.ok().flatten()
}

/// One output line: to the log (the QR link only as a mention: it logs in whoever opens it)
/// and into the progress.
fn heard(wechat: &Wechat, raw: &str, last: &mut String) {
    match output::read(raw) {
        Line::Noise => {}
        Line::QrLink(url) => {
            tracing::info!(
                "WeChat: QR code ready; scan it in MetaClaw's window or terminal (the link is not logged)"
            );
            wechat.update(|p| p.qr_url = Some(url));
        }
        Line::Said { text, connected } => {
            tracing::info!("WeChat: {text}");
            if connected {
                wechat.update(|p| {
                    p.connected = true;
                    p.qr_url = None;
                });
            }
            *last = text;
        }
    }
}

/// After a good install, OpenClaw's gateway restarts as `agent connect` restarts it (when
/// its config reload is off and it runs as a service); a failed restart is a note, not a
/// failed install.
async fn finish(job: Job) -> Result<Option<String>, String> {
    if job != Job::Install {
        return Ok(None);
    }
    let restart = tokio::task::spawn_blocking(|| {
        let env = agents::system_env().map_err(|e| e.to_string())?;
        let adapter = agents::adapter("openclaw").map_err(|e| e.to_string())?;
        Ok::<_, String>(metaclaw_claws::reload(adapter.as_ref(), &env))
    })
    .await
    .map_err(|e| e.to_string())??;
    Ok(restart.warning())
}

fn missing(program: &str) -> String {
    match program {
        "npx" => "cannot install OpenClaw's WeChat plugin: `npx` is not on PATH. It comes with Node.js: install Node.js 22 or newer (https://nodejs.org), then start MetaClaw again".into(),
        "openclaw" => "cannot log in to WeChat: `openclaw` is not on PATH. Install OpenClaw, or add its folder to PATH, then try again".into(),
        other => format!("`{other}` is not on PATH"),
    }
}

fn failed(command: &str, code: Option<i32>, last: &str) -> String {
    let exit = code.map_or_else(
        || "was killed".to_owned(),
        |c| format!("exited with code {c}"),
    );
    let detail: String = last.chars().take(DETAIL_CHARS).collect();
    if detail.is_empty() {
        format!("`{command}` {exit}")
    } else {
        format!("`{command}` {exit}: {detail}")
    }
}
