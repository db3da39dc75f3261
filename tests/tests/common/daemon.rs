//! The `metaclaw` binary in a private home, for tests that drive it as a user would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

pub const PROXY_KEY: &str = "mc-cli-test-proxy-key";

pub fn bin() -> PathBuf {
    let p = std::env::var_os("METACLAW_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/metaclaw"));
    assert!(
        p.exists(),
        "build the binary first: cargo build -p metaclaw ({})",
        p.display()
    );
    p
}

/// A port for a daemon to listen on, free when asked. Drawn below Linux's ephemeral range
/// (32768–60999), where the kernel picks the local ports of outgoing connections: a port
/// from port 0 is in that range, and on a busy machine running the suite's many HTTP clients
/// another connection could take it before the daemon binds it.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const FIRST: u32 = 20_000;
    const SPAN: u32 = 12_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Each test process starts at its own offset, so parallel test binaries rarely meet, and
    // steps by a prime: neighbouring ports are not handed out together (the desktop app
    // offers the port above a taken one, which must not be another test's).
    const STRIDE: u32 = 7_919;
    let base = std::process::id().wrapping_mul(STRIDE) % SPAN;
    for _ in 0..SPAN {
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let n = (base + k.wrapping_mul(STRIDE)) % SPAN;
        let port = u16::try_from(FIRST + n).unwrap();
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {FIRST}..{}", FIRST + SPAN)
}

pub struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    pub fn new(config: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.yaml"), config).unwrap();
        Home { dir }
    }

    /// `metaclaw ARGS` in this home, with the proxy key from the environment and secrets in
    /// `backend` (`file` or `keychain`).
    pub fn cmd(&self, backend: &str, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args)
            .env("METACLAW_HOME", self.dir.path())
            .env("METACLAW_SECRET_BACKEND", backend)
            .env("METACLAW_PROXY_API_KEY", PROXY_KEY)
            .env(
                metaclaw_e2e::NO_MODEL_DOWNLOADS.0,
                metaclaw_e2e::NO_MODEL_DOWNLOADS.1,
            )
            .env_remove("METACLAW_LLM_API_KEY");
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd("file", args).output().unwrap()
    }

    pub fn run_with_stdin(&self, args: &[&str], input: &str) -> Output {
        run_with_stdin(self.cmd("file", args), input)
    }

    /// `metaclaw start --daemon` in this home (file secrets); returns once it answers.
    pub async fn start_daemon(&self) -> Output {
        let mut start = self.cmd("file", &["start", "--daemon"]);
        let o = tokio::task::spawn_blocking(move || start.output().unwrap())
            .await
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        o
    }

    /// The running daemon's admin API token.
    pub fn admin_token(&self) -> String {
        std::fs::read_to_string(self.path().join("run/admin_token"))
            .unwrap()
            .trim()
            .to_string()
    }

    /// `GET path` of the daemon on `port`'s admin API, as JSON.
    pub async fn admin_get(&self, port: u16, path: &str) -> serde_json::Value {
        reqwest::Client::new()
            .get(format!("http://127.0.0.1:{port}{path}"))
            .bearer_auth(self.admin_token())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        // Never leave a daemon behind, whatever the test did.
        let _ = self.run(&["stop"]);
    }
}

/// Runs `c` with `input` on its stdin (closed afterwards) and collects its output.
pub fn run_with_stdin(mut c: Command, input: &str) -> Output {
    use std::io::Write;
    let mut child = c
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Readiness poll, bounded: the child process offers nothing else to wait on.
pub async fn wait_healthy(client: &reqwest::Client, base: &str, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while client.get(format!("{base}/healthz")).send().await.is_err() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
