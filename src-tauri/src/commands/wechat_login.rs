//! `metaclaw start --wechat-relogin` in a terminal: the WeChat login's QR code drawn as text
//! and its progress, as the engine reports it (in the foreground from the engine's events;
//! with `--daemon` from the started daemon's `/api/wechat`), then the result.

use std::io::IsTerminal;
use std::time::Duration;

use metaclaw_engine::events::{EngineEvent, Events};
use metaclaw_engine::paths::Paths;
use metaclaw_engine::wechat::qr;
use tokio::sync::broadcast::error::RecvError;

use crate::admin_client::{self, AdminClient};
use crate::exit::Failure;
use crate::output;

/// A login outlasting this is reported as still running (the plugin gives up after 8 min).
const FOLLOW_LIMIT: Duration = Duration::from_secs(11 * 60);
const POLL: Duration = Duration::from_millis(500);

/// Prints the QR code and each new WeChat line of a foreground engine, for as long as it
/// runs, when stdout is a terminal: a daemon's stdout is its log file, which never gets the
/// login link (it logs in whoever opens it).
pub fn follow_events(events: &Events) {
    if !std::io::stdout().is_terminal() {
        return;
    }
    let mut rx = events.subscribe();
    tokio::spawn(async move {
        let mut shown = Shown::default();
        loop {
            match rx.recv().await {
                Ok(EngineEvent::Wechat { state, line, qr }) => shown.show(&state, &line, qr),
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break,
            }
        }
    });
}

/// Follows the login the just-started daemon runs, until it ends: QR code, lines, result.
pub fn follow_daemon(paths: &Paths) -> Result<(), Failure> {
    let client = AdminClient::connect(paths)?;
    admin_client::runtime()?.block_on(async move {
        let mut shown = Shown::default();
        let end = tokio::time::Instant::now() + FOLLOW_LIMIT;
        loop {
            let view = client.get("/api/wechat").await?;
            let text = |k: &str| view[k].as_str().unwrap_or_default().to_owned();
            let qr = view["qr"]["url"].as_str().map(str::to_owned);
            shown.show(&text("state"), &text("line"), qr);
            if !view["running"].as_bool().unwrap_or(false) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= end {
                output::line(
                    "WeChat: the login is still waiting; `metaclaw status` shows how it ends.",
                );
                return Ok(());
            }
            // The daemon is another process: its state is read, there is nothing to wait on.
            tokio::time::sleep(POLL).await;
        }
    })
}

/// `start --daemon --wechat-relogin` with MetaClaw already running: asks it for the login and
/// follows it as for a daemon just started.
pub fn login_on_running(paths: &Paths) -> Result<(), Failure> {
    let client = AdminClient::connect(paths)?;
    admin_client::runtime()?.block_on(client.post("/api/wechat/login"))?;
    follow_daemon(paths)
}

/// What was printed already, so each line and QR code shows once.
#[derive(Default)]
struct Shown {
    line: String,
    qr: Option<String>,
}

impl Shown {
    fn show(&mut self, state: &str, line: &str, qr: Option<String>) {
        if let Some(url) = qr.filter(|u| self.qr.as_ref() != Some(u)) {
            output::line("Scan this QR code with WeChat on your phone:");
            if let Some(art) = qr::text(&url) {
                output::line(art);
            }
            output::line(format!("Or open this link on your phone: {url}"));
            self.qr = Some(url);
        }
        if line != self.line {
            if state == "failed" || state == "unsupported" {
                output::error(line);
            } else {
                output::line(format!("WeChat: {}", line.trim_start_matches("WeChat: ")));
            }
            self.line = line.to_owned();
        }
    }
}
