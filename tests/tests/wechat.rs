//! The WeChat channel through the real binary, with a fake `npx` (the plugin's installer)
//! and a fake `openclaw` on `PATH` that log their calls, print the plugin's real output (its
//! Chinese status lines, QR block art and login link) and wait for a "scan" (a file the
//! test creates). Covered: install at start with the QR code in the API and the gateway
//! restart, `start --wechat-relogin` drawing the QR code in the terminal, a second login
//! refused while one runs, Node.js missing, a failing installer (MetaClaw keeps serving),
//! another agent (a clear message, nothing run), and `uninstall` removing the plugin.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

use common::daemon::{Home, PROXY_KEY, free_port, stdout};
use common::events::EventStream;
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_e2e::fake_wechat::{FakeWechat, LINK};
use serde_json::{Value, json};

/// A MetaClaw home, a user home, and the fake programs.
struct World {
    home: Home,
    user: tempfile::TempDir,
    bin: tempfile::TempDir,
    wx: FakeWechat,
}

impl World {
    fn new(config: &str) -> World {
        let (user, bin) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        World {
            home: Home::new(config),
            wx: FakeWechat::new(bin.path(), user.path()).unwrap(),
            user,
            bin,
        }
    }

    /// `metaclaw ARGS` with this world's HOME, and PATH: the fakes first, then `rest`.
    fn cmd_with_path(&self, args: &[&str], rest: Option<&std::ffi::OsStr>) -> Command {
        let mut c = self.home.cmd("file", args);
        let mut dirs = vec![self.bin.path().to_owned()];
        if let Some(rest) = rest {
            dirs.extend(std::env::split_paths(rest));
        }
        c.env("HOME", self.user.path())
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("OPENCLAW_HOME")
            .env_remove("OPENCLAW_STATE_DIR")
            .env_remove("OPENCLAW_CONFIG_PATH");
        c
    }

    fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_with_path(args, std::env::var_os("PATH").as_deref())
    }

    async fn run(&self, args: &[&str]) -> Output {
        let mut c = self.cmd(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    }

    async fn start(&self, extra: &[&str]) {
        let mut args = vec!["start", "--daemon"];
        args.extend_from_slice(extra);
        let o = self.run(&args).await;
        assert!(o.status.success(), "{o:?}");
    }

    fn port(&self) -> u16 {
        std::fs::read_to_string(self.home.path().join("run/port"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    fn admin(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .request(method, format!("http://127.0.0.1:{}{path}", self.port()))
            .bearer_auth(self.home.admin_token())
    }

    async fn wechat(&self) -> Value {
        let r = self
            .admin(reqwest::Method::GET, "/api/wechat")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.json().await.unwrap()
    }

    /// Subscribes to the engine's events (before reading the state, so no change is missed).
    async fn events(&self) -> EventStream {
        let r = self
            .admin(reqwest::Method::GET, "/api/events")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        EventStream::new(r)
    }

    /// `/api/wechat` once its state is `want`, waiting on the engine's `wechat` events.
    async fn wechat_when(&self, events: &mut EventStream, want: &str) -> Value {
        let now = self.wechat().await;
        if now["state"] == want {
            return now;
        }
        loop {
            let e = events.next_of("wechat").await;
            if e["state"] == want {
                return self.wechat().await;
            }
            assert!(want == "failed" || e["state"] != "failed", "{e}");
        }
    }

    /// Every log line MetaClaw wrote (the daily file and the daemon's output).
    fn logs(&self) -> String {
        let mut all = String::new();
        for entry in std::fs::read_dir(self.home.path().join("logs")).unwrap() {
            all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default());
        }
        all
    }

    /// A chat turn through the proxy answers: MetaClaw keeps serving.
    async fn chat_works(&self) {
        let r = reqwest::Client::new()
            .post(format!(
                "http://127.0.0.1:{}/v1/chat/completions",
                self.port()
            ))
            .bearer_auth(PROXY_KEY)
            .json(&json!({"model": "x", "messages": [{"role": "user", "content": "hello there"}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
}

fn config(fake: &FakeUpstream, claw: &str, wechat: bool) -> String {
    format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {}\nclaw_type: {claw}\nwechat:\n  enabled: {wechat}\n",
        fake.base_url_openai(),
        free_port()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn install_at_start_shows_the_qr_code_restarts_the_gateway_and_connects() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let w = World::new(&config(&fake, "openclaw", true));
    // A gateway that runs as a service with config reload off: restarted after the install.
    let oc = w.user.path().join(".openclaw");
    std::fs::create_dir_all(&oc).unwrap();
    std::fs::write(
        oc.join("openclaw.json"),
        "{gateway: {reload: {mode: 'off'}}}\n",
    )
    .unwrap();
    let unit = w.user.path().join(".config/systemd/user");
    std::fs::create_dir_all(&unit).unwrap();
    std::fs::write(unit.join("openclaw-gateway.service"), "[Service]\n").unwrap();

    w.start(&[]).await;
    let mut events = w.events().await;
    let waiting = w.wechat_when(&mut events, "waiting_for_scan").await;
    assert_eq!(waiting["qr"]["url"], LINK, "{waiting}");
    let svg = waiting["qr"]["svg"].as_str().unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("<svg"), "{svg}");
    assert_eq!(waiting["running"], true);
    assert_eq!(waiting["supported"], true);
    // Serving goes on while the installer waits for the scan; status says what to do.
    w.chat_works().await;
    let status = w.run(&["status"]).await;
    assert!(
        stdout(&status).contains("wechat:     Scan the QR code with WeChat on your phone"),
        "{status:?}"
    );

    w.wx.scan().unwrap();
    let done = w.wechat_when(&mut events, "connected").await;
    assert_eq!(done["running"], false);
    assert_eq!(done["installed"], true);
    assert_eq!(done["qr"], Value::Null);
    assert_eq!(done["line"], "WeChat is connected to OpenClaw");
    let calls = w.wx.calls();
    let install = calls
        .iter()
        .position(|c| c == "npx -y @tencent-weixin/openclaw-weixin-cli@latest install")
        .unwrap_or_else(|| panic!("{calls:?}"));
    assert!(
        calls[install..]
            .iter()
            .any(|c| c == "openclaw gateway restart"),
        "the gateway restarts after the install: {calls:?}"
    );
    // The daemon runs with METACLAW_PROXY_API_KEY set (as a headless user sets it): the
    // installer, code from npm, never sees it.
    assert_eq!(w.wx.metaclaw_variables_seen(), Vec::<String>::new());
    let logs = w.logs();
    assert!(logs.contains("WeChat: Connected to WeChat."), "{logs}");
    assert!(logs.contains("WeChat: Waiting for the scan"), "{logs}");
    assert!(
        !logs.contains("e2e-login-4711"),
        "the login link (it logs in whoever opens it) stays out of the log: {}",
        logs.lines()
            .filter(|l| l.contains("e2e-login-4711"))
            .collect::<Vec<_>>()
            .join("\n")
    );

    // Installed now: the next start installs nothing again.
    let o = w.run(&["stop"]).await;
    assert!(o.status.success(), "{o:?}");
    w.start(&[]).await;
    assert_eq!(w.wechat().await["state"], "installed");
    let installs =
        w.wx.calls()
            .iter()
            .filter(|c| c.starts_with("npx "))
            .count();
    assert_eq!(installs, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn relogin_draws_the_qr_code_in_the_terminal_and_one_login_runs_at_a_time() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let w = World::new(&config(&fake, "openclaw", true));
    w.wx.install_plugin().unwrap();

    let mut start = w.cmd(&["start", "--daemon", "--wechat-relogin"]);
    let mut child = start
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let wx = w.wx.clone();
    // Read the terminal until the link shows, then "scan"; collect the rest.
    let printed = tokio::task::spawn_blocking(move || {
        let mut all = String::new();
        for line in BufReader::new(out).lines() {
            let line = line.unwrap();
            if line.contains(LINK) {
                wx.scan().unwrap();
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    })
    .await
    .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{printed}");
    assert!(
        printed.contains("Scan this QR code with WeChat on your phone:"),
        "{printed}"
    );
    // The QR code drawn as half blocks, many rows of it.
    let art = printed
        .lines()
        .filter(|l| l.contains('▀') || l.contains('▄'))
        .count();
    assert!(art > 10, "{printed}");
    assert!(
        printed.contains(&format!("Or open this link on your phone: {LINK}")),
        "{printed}"
    );
    assert!(
        printed.contains("WeChat: WeChat is connected to OpenClaw"),
        "{printed}"
    );
    assert!(
        w.wx.calls()
            .contains(&"openclaw channels login --channel openclaw-weixin".to_owned()),
        "{:?}",
        w.wx.calls()
    );
    assert!(
        !w.wx.calls().iter().any(|c| c.starts_with("npx ")),
        "installed: no install"
    );

    // Log in again through the API: one at a time.
    w.wx.unscan().unwrap();
    let mut events = w.events().await;
    let first = w
        .admin(reqwest::Method::POST, "/api/wechat/login")
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 202);
    let body: Value = first.json().await.unwrap();
    assert_eq!(body["running"], true);
    let second = w
        .admin(reqwest::Method::POST, "/api/wechat/login")
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), 409);
    let refused: Value = second.json().await.unwrap();
    assert_eq!(
        refused["error"]["message"],
        "a WeChat install or login is already running"
    );
    w.wechat_when(&mut events, "waiting_for_scan").await;
    w.wx.scan().unwrap();
    w.wechat_when(&mut events, "connected").await;
    let logins =
        w.wx.calls()
            .iter()
            .filter(|c| c.contains("channels login"))
            .count();
    assert_eq!(logins, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_node_the_error_names_it_and_serving_goes_on() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let w = World::new(&config(&fake, "openclaw", true));
    w.wx.remove_npx().unwrap();
    // PATH holds the fakes only: no npx anywhere.
    let mut start = w.cmd_with_path(&["start", "--daemon"], None);
    let o = tokio::task::spawn_blocking(move || start.output().unwrap())
        .await
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let mut events = w.events().await;
    let failed = w.wechat_when(&mut events, "failed").await;
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("`npx` is not on PATH") && error.contains("Node.js"),
        "{error}"
    );
    assert_eq!(failed["running"], false);
    w.chat_works().await;
    let status = w.run(&["status"]).await;
    assert!(status.status.success(), "{status:?}");
    assert!(stdout(&status).contains("Node.js"), "{status:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_installer_is_reported_and_serving_goes_on() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let w = World::new(&config(&fake, "openclaw", true));
    w.wx.fail_installs(true).unwrap();
    w.start(&[]).await;
    let mut events = w.events().await;
    let failed = w.wechat_when(&mut events, "failed").await;
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("exited with code 1") && error.contains("npm ERR! 404"),
        "{error}"
    );
    assert_eq!(failed["installed"], false);
    w.chat_works().await;
    // Trying again once the cause is gone works, through the same action.
    w.wx.fail_installs(false).unwrap();
    w.wx.scan().unwrap();
    let r = w
        .admin(reqwest::Method::POST, "/api/wechat/login")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    w.wechat_when(&mut events, "connected").await;
    assert!(w.wx.plugin_dir().join("package.json").is_file());
}

#[tokio::test(flavor = "multi_thread")]
async fn another_agent_gets_a_clear_message_and_nothing_runs() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let w = World::new(&config(&fake, "hermes", true));
    let o = w.run(&["start", "--daemon", "--wechat-relogin"]).await;
    assert!(o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("WeChat works only with OpenClaw (claw_type is hermes)"),
        "{o:?}"
    );
    let view = w.wechat().await;
    assert_eq!(view["state"], "unsupported");
    assert_eq!(view["supported"], false);
    let r = w
        .admin(reqwest::Method::POST, "/api/wechat/login")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("works only with OpenClaw"),
        "{body}"
    );
    w.chat_works().await;
    assert!(
        !w.wx
            .calls()
            .iter()
            .any(|c| c.starts_with("npx ") || c.contains("channels login")),
        "{:?}",
        w.wx.calls()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn uninstall_offers_to_remove_the_plugin() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let w = World::new(&config(&fake, "openclaw", false));
    w.wx.install_plugin().unwrap();
    // No terminal to ask at: kept, with the command that removes it.
    let o = w.run(&["uninstall", "--keep-data"]).await;
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).contains("Kept OpenClaw's WeChat plugin; `openclaw plugins uninstall openclaw-weixin --force` removes it."),
        "{o:?}"
    );
    assert!(w.wx.plugin_dir().exists());
    // --yes answers yes: OpenClaw's own command removes it.
    let o = w.run(&["uninstall", "--yes"]).await;
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).contains("Removed OpenClaw's WeChat plugin."),
        "{o:?}"
    );
    assert!(
        w.wx.calls()
            .contains(&"openclaw plugins uninstall openclaw-weixin --force".to_owned()),
        "{:?}",
        w.wx.calls()
    );
    assert!(!w.wx.plugin_dir().exists());
}
