//! `metaclaw start --daemon`: start a detached engine and return once it is healthy.

use std::fs::OpenOptions;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use metaclaw_engine::paths::Paths;
use metaclaw_engine::runfiles::RunInfo;

use crate::cli::StartArgs;
use crate::exit::{Failure, Outcome};
use crate::output;

/// How long to wait for the daemon's first health check; `METACLAW_START_TIMEOUT_SECS` overrides.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

pub fn spawn(paths: &Paths, args: &StartArgs) -> Outcome {
    if let Some(info) = RunInfo::read(paths)?
        && info.is_alive()
    {
        // Already running is what was asked for: said as status says it, exit 0.
        let host = if paths.desktop_socket().exists() {
            "the desktop app, "
        } else {
            ""
        };
        let port = info
            .port
            .map(|p| format!(", http://127.0.0.1:{p}"))
            .unwrap_or_default();
        output::line(format!(
            "MetaClaw is already running ({host}PID {}{port}); nothing to start.",
            info.pid
        ));
        if args.wechat_relogin {
            super::wechat_login::login_on_running(paths)?;
        }
        return Ok(());
    }
    paths.ensure_dirs()?;
    let log = args
        .log_file
        .clone()
        .unwrap_or_else(|| paths.logs.join("daemon.log"));
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out = OpenOptions::new().create(true).append(true).open(&log)?;
    let err = out.try_clone()?;
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.arg("start").arg("--headless");
    if let Some(p) = args.port {
        cmd.arg("--port").arg(p.to_string());
    }
    if let Some(m) = &args.mode {
        cmd.arg("--mode").arg(m);
    }
    if args.wechat_relogin {
        cmd.arg("--wechat-relogin");
    }
    cmd.env(metaclaw_engine::paths::HOME_ENV, &paths.home);
    if paths.config != Paths::new(&paths.home)?.config {
        cmd.arg("--config").arg(&paths.config);
    }
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    #[cfg(unix)]
    {
        // Its own process group, so a terminal's Ctrl-C does not reach the daemon.
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    let timeout = std::env::var("METACLAW_START_TIMEOUT_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let deadline = Instant::now() + timeout;
    let pid = child.id();
    loop {
        if let Some(status) = child.try_wait()? {
            return Err(Failure::error(format!(
                "MetaClaw exited during start-up ({status}); see {}",
                log.display()
            )));
        }
        if let Some(info) = RunInfo::read(paths)?
            && info.pid == pid
            && let Some(port) = info.port
            && healthy(port)
        {
            output::line(format!(
                "MetaClaw started in the background (PID {pid}, http://127.0.0.1:{port}). Logs: {}",
                log.display()
            ));
            if args.wechat_relogin {
                super::wechat_login::follow_daemon(paths)?;
            }
            return Ok(());
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Failure::error(format!(
                "MetaClaw did not become healthy within {} s; see {}",
                timeout.as_secs(),
                log.display()
            )));
        }
        // Readiness polling: the child offers no other signal to wait on.
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `GET /healthz` answers `{"ok":true}`; a plain TCP exchange keeps this free of a runtime.
fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(500),
    ) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req =
        format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    resp.starts_with("HTTP/1.1 200") && resp.contains("\"ok\":true")
}
