//! The benchmark's child processes: the fake upstream and the proxy. Each is wrapped in a
//! guard that kills it when dropped, so every exit path (errors, time limit) cleans up.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::client;

/// A child process that is killed (and reaped) when dropped.
pub struct ChildGuard {
    child: Child,
    name: &'static str,
}

impl ChildGuard {
    fn new(child: Child, name: &'static str) -> Self {
        Self { child, name }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Fails if the process has already exited.
    fn check_alive(&mut self) -> Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("{} exited early with {status}", self.name);
        }
        Ok(())
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        // Reap it so no zombie outlives the bench; SIGKILL makes this immediate.
        let _ = self.child.try_wait();
    }
}

/// Starts `fake-upstream --fast` and reads the port it printed. Its stdin stays a pipe owned
/// by the guard, so the fake also exits if the bench dies without running destructors.
pub async fn start_fake(exe: &Path, api_key: &str) -> Result<(ChildGuard, SocketAddr)> {
    start_fake_with(exe, api_key, &[]).await
}

/// `start_fake` with more arguments (e.g. `--chunk-gap-ms 2`).
pub async fn start_fake_with(
    exe: &Path,
    api_key: &str,
    extra: &[&str],
) -> Result<(ChildGuard, SocketAddr)> {
    let mut child = Command::new(exe)
        .args(["--port", "0", "--fast", "--api-key", api_key])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let stdout = child.stdout.take().context("fake-upstream stdout")?;
    let guard = ChildGuard::new(child, "fake-upstream");
    let mut line = String::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        BufReader::new(stdout).read_line(&mut line),
    )
    .await
    .context("fake-upstream did not print its port within 10 s")??;
    let port: u16 = line
        .trim()
        .strip_prefix("PORT=")
        .with_context(|| format!("fake-upstream printed {line:?}, expected PORT=<n>"))?
        .parse()?;
    Ok((guard, SocketAddr::from(([127, 0, 0, 1], port))))
}

/// A running proxy with its private home directory.
pub struct Proxy {
    pub guard: ChildGuard,
    pub addr: SocketAddr,
    pub log: PathBuf,
    /// Removed on drop, after the guard (field order) has killed the process.
    home_dir: tempfile::TempDir,
}

pub struct ProxySpec<'a> {
    pub exe: &'a Path,
    pub upstream: SocketAddr,
    pub upstream_key: &'a str,
    pub proxy_key: &'a str,
    /// YAML appended to the proxy's config (e.g. `skills:\n  enabled: false\n`).
    pub extra_config: &'a str,
    /// Extra environment of the proxy (e.g. allocator settings being compared).
    pub env: &'a [(String, String)],
}

pub async fn start_proxy(spec: &ProxySpec<'_>, ready_within: Duration) -> Result<Proxy> {
    start_proxy_to(spec, "openai", ready_within).await
}

/// Starts the proxy against an upstream speaking `api` (`openai` or `anthropic`).
pub async fn start_proxy_to(
    spec: &ProxySpec<'_>,
    api: &str,
    ready_within: Duration,
) -> Result<Proxy> {
    start_proxy_in(tempfile::tempdir()?, spec, api, ready_within).await
}

/// Starts the proxy with `home` as its `METACLAW_HOME`, which may already hold skills and a
/// database (the library benchmark seeds them first).
pub async fn start_proxy_in(
    home: tempfile::TempDir,
    spec: &ProxySpec<'_>,
    api: &str,
    ready_within: Duration,
) -> Result<Proxy> {
    let base = match api {
        "anthropic" => format!("http://{}", spec.upstream),
        _ => format!("http://{}/v1", spec.upstream),
    };
    let config = format!(
        "llm:\n  api: {api}\n  api_base: {base}\n  model_id: fake-model\n{}",
        spec.extra_config
    );
    std::fs::write(home.path().join("config.yaml"), config)?;
    let log = home.path().join("bench-proxy.log");
    let log_file = std::fs::File::create(&log)?;
    let port = free_port()?;
    let child = Command::new(spec.exe)
        .args(["start", "--headless", "--port", &port.to_string()])
        .env("METACLAW_HOME", home.path())
        .env("METACLAW_SECRET_BACKEND", "file")
        .env("METACLAW_LLM_API_KEY", spec.upstream_key)
        .env("METACLAW_PROXY_API_KEY", spec.proxy_key)
        .env(crate::NO_MODEL_DOWNLOADS.0, crate::NO_MODEL_DOWNLOADS.1)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", spec.exe.display()))?;
    let mut proxy = Proxy {
        guard: ChildGuard::new(child, "metaclaw"),
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        log,
        home_dir: home,
    };
    if let Err(e) = wait_healthy(&mut proxy, ready_within).await {
        bail!("{e:#}\n--- proxy log (tail) ---\n{}", log_tail(&proxy.log));
    }
    Ok(proxy)
}

/// A running LiteLLM proxy (the peer the benchmark compares with) and its config directory.
pub struct LiteLlm {
    pub guard: ChildGuard,
    pub addr: SocketAddr,
    /// Removed on drop, after the guard (field order) has killed the process.
    dir: tempfile::TempDir,
}

impl LiteLlm {
    pub fn log_tail(&self) -> String {
        log_tail(&self.dir.path().join("litellm.log"))
    }
}

/// Starts `litellm` (its proxy CLI, from PyPI) with one worker in front of the same upstream,
/// serving `fake-model` to clients that present `master_key` (LiteLLM wants it to start
/// with `sk-`).
pub async fn start_litellm(
    exe: &Path,
    upstream: SocketAddr,
    upstream_key: &str,
    master_key: &str,
    ready_within: Duration,
) -> Result<LiteLlm> {
    let dir = tempfile::tempdir()?;
    let config = format!(
        "model_list:\n  - model_name: fake-model\n    litellm_params:\n      model: openai/fake-model\n      api_base: http://{upstream}/v1\n      api_key: {upstream_key}\ngeneral_settings:\n  master_key: {master_key}\nlitellm_settings:\n  telemetry: false\n"
    );
    let config_path = dir.path().join("litellm.yaml");
    std::fs::write(&config_path, config)?;
    let log = std::fs::File::create(dir.path().join("litellm.log"))?;
    let port = free_port()?;
    let child = Command::new(exe)
        .arg("--config")
        .arg(&config_path)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--num_workers",
            "1",
        ])
        .env("LITELLM_LOG", "ERROR")
        .env("LITELLM_TELEMETRY", "False")
        .env("NO_DOCS", "True")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let mut peer = LiteLlm {
        guard: ChildGuard::new(child, "litellm"),
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        dir,
    };
    let deadline = Instant::now() + ready_within;
    loop {
        if let Err(e) = peer.guard.check_alive() {
            bail!("{e:#}\n--- litellm log (tail) ---\n{}", peer.log_tail());
        }
        if let Ok((200, _)) = client::get(peer.addr, "/health/liveliness").await {
            return Ok(peer);
        }
        if Instant::now() >= deadline {
            bail!(
                "litellm not ready within {ready_within:?}\n--- litellm log (tail) ---\n{}",
                peer.log_tail()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Polls `/healthz` until it answers 200 `{"ok":true}`.
async fn wait_healthy(proxy: &mut Proxy, within: Duration) -> Result<()> {
    let deadline = Instant::now() + within;
    loop {
        proxy.guard.check_alive()?;
        let last = match client::get(proxy.addr, "/healthz").await {
            Ok((200, body)) => {
                let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                if v["ok"] == true {
                    return Ok(());
                }
                format!("200 {}", String::from_utf8_lossy(&body))
            }
            Ok((status, body)) => format!("{status} {}", String::from_utf8_lossy(&body)),
            Err(e) => format!("{e:#}"),
        };
        if Instant::now() >= deadline {
            bail!("proxy not healthy within {within:?}: last answer: {last}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl Proxy {
    /// The proxy's `METACLAW_HOME`.
    pub fn home(&self) -> &Path {
        self.home_dir.path()
    }
}

fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Resident set size of a process in KiB, from `/proc/<pid>/status`.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:")
}

/// The anonymous (heap, stacks) and file-backed (code, mapped libraries) parts of the RSS,
/// in KiB: only the first is memory the process can give back.
pub fn rss_parts_kib(pid: u32) -> Option<(u64, u64)> {
    Some((status_kib(pid, "RssAnon:")?, status_kib(pid, "RssFile:")?))
}

/// The most the process has held resident since [`reset_peak_rss`] (or its start), in KiB:
/// the kernel's own high-water mark, which no sampling interval can miss.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM:")
}

/// Resets the kernel's high-water mark to the current RSS.
pub fn reset_peak_rss(pid: u32) -> std::io::Result<()> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5")
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
