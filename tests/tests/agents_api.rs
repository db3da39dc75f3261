//! `/api/agents` through the real binary, over a fake user machine: `HOME` holds CoPaw's
//! and IronClaw's own configs (comments, unrelated settings, the user's provider key) and
//! `PATH` starts with fake agent binaries that log their argv, so every restart is seen.
//! List, preview (writes nothing), connect (one restart, the key never in a response or
//! log), verify through MetaClaw to the fake upstream, connect again (nothing touched),
//! disconnect (byte-identical), unknown agents, broken configs, and what `start` does with
//! and without `claw_type`.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const UPSTREAM_KEY: &str = "sk-upstream-agents-e2e-123456";
/// The user's own provider key, in CoPaw's config before MetaClaw.
const USER_KEY: &str = "sk-dashscope-user-0123456789abcd";

/// CoPaw 1.0's global active model (the main file MetaClaw edits), as `copaw models`
/// writes it, and the provider MetaClaw registers beside it.
const COPAW: &str = ".copaw.secret/providers/active_model.json";
const COPAW_PROVIDER: &str = ".copaw.secret/providers/custom/metaclaw.json";
const COPAW_CONFIG: &str = "{\n  \"provider_id\": \"dashscope\",\n  \"model\": \"qwen-max\"\n}";
/// The built-in provider the active model names, holding the user's key.
const COPAW_DASHSCOPE: (&str, &str) = (
    ".copaw.secret/providers/builtin/dashscope.json",
    r#"{
  "id": "dashscope",
  "base_url": "https://dashscope.aliyuncs.com/compatible-mode/v1",
  "api_key": "sk-dashscope-user-0123456789abcd"
}"#,
);

/// A picoclaw config, for the restart that fails (CoPaw has no restart command).
const PICOCLAW: &str = ".picoclaw/config.json";
const PICOCLAW_CONFIG: &str = r#"{
  "agents": {"defaults": {"model_name": "gpt4"}},
  "model_list": [
    {"model_name": "gpt4", "model": "openai/gpt-5.2", "api_key": "sk-openai-user", "api_base": "https://api.openai.com/v1"}
  ]
}
"#;

const IRONCLAW: &str = ".ironclaw/.env";
const IRONCLAW_ENV: &str = "# IronClaw settings (written by `ironclaw onboard`)
DATABASE_URL=postgres://localhost/ironclaw

# LLM
LLM_BACKEND=nearai
NEARAI_MODEL=fireworks::accounts/fireworks/models/llama4-maverick-instruct-basic

AGENT_NAME=iron # the name it answers to
HTTP_PORT=3000
";

/// The user's machine: a home with agent configs, fake agent binaries, their restart log.
struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    /// Fake binaries for `agents`, each appending `<name> <args>` to the restart log.
    fn new(agents: &[&str]) -> Machine {
        let m = Machine {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(m.home()).unwrap();
        std::fs::create_dir_all(m.bin()).unwrap();
        for name in agents {
            let script = format!(
                "#!/bin/sh\nprintf '%s\\n' \"{name} $*\" >> '{}'\n",
                m.restart_log().display()
            );
            let path = m.bin().join(name);
            std::fs::write(&path, script).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        m
    }

    /// Replaces `name`'s fake binary with `body` (a shell script's lines after the shebang).
    fn script(&self, name: &str, body: &str) {
        let path = self.bin().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    fn restart_log(&self) -> PathBuf {
        self.dir.path().join("restarts.log")
    }

    /// Every command a fake agent binary ran, in order.
    fn restarts(&self) -> Vec<String> {
        match std::fs::read_to_string(self.restart_log()) {
            Ok(s) => s.lines().map(str::to_owned).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => panic!("{e}"),
        }
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.home().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        if rel == COPAW {
            let (rel, text) = COPAW_DASHSCOPE;
            self.write(rel, text);
        }
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.home().join(rel)).unwrap()
    }

    fn exists(&self, rel: &str) -> bool {
        self.home().join(rel).exists()
    }
}

struct Daemon {
    fake: FakeUpstream,
    /// Declared before `machine`: its `Drop` stops the daemon before the machine goes.
    home: Home,
    machine: Machine,
    port: u16,
    token: String,
}

impl Daemon {
    /// `metaclaw start --daemon` with `HOME` and `PATH` pointing at `machine`; `extra`
    /// is appended to config.yaml.
    async fn start(machine: Machine, extra: &str) -> Daemon {
        let fake = FakeUpstream::start(FakeOptions {
            api_key: Some(UPSTREAM_KEY.into()),
            ..FakeOptions::default()
        })
        .await
        .unwrap();
        let port = free_port();
        let home = Home::new(&format!(
            "llm:\n  provider: custom\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\nskills:\n  enabled: false\nmemory:\n  enabled: false\n{extra}",
            fake.base_url_openai()
        ));
        std::fs::write(
            home.path().join("secrets.yaml"),
            format!("llm.api_key: {UPSTREAM_KEY}\n"),
        )
        .unwrap();
        let mut d = Daemon {
            fake,
            home,
            machine,
            port,
            token: String::new(),
        };
        d.launch().await;
        d
    }

    /// `metaclaw start --daemon` on the machine; returns once it answers.
    async fn launch(&mut self) {
        let mut start = self.home.cmd("file", &["start", "--daemon"]);
        start.env("HOME", self.machine.home()).env(
            "PATH",
            format!("{}:/usr/bin:/bin", self.machine.bin().display()),
        );
        let o = tokio::task::spawn_blocking(move || start.output().unwrap())
            .await
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        self.token = self.home.admin_token();
    }

    /// Stops the daemon and starts it again on another port.
    async fn restart_on_new_port(&mut self) {
        assert!(self.home.run(&["stop"]).status.success());
        let config = self.home.path().join("config.yaml");
        let old = std::fs::read_to_string(&config).unwrap();
        let port = free_port();
        let new = old.replace(
            &format!("port: {}\n", self.port),
            &format!("port: {port}\n"),
        );
        assert_ne!(old, new);
        std::fs::write(&config, new).unwrap();
        self.port = port;
        self.launch().await;
    }

    /// The proxy's address as agents are given it.
    fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn backup_dir(&self, agent: &str) -> PathBuf {
        self.home.path().join("agent-backup").join(agent)
    }

    /// One admin call; no response may hold a key.
    async fn call(&self, method: Method, path: &str) -> (StatusCode, Value) {
        let r = reqwest::Client::new()
            .request(method, format!("http://127.0.0.1:{}{path}", self.port))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        let status = r.status();
        let text = r.text().await.unwrap();
        for key in [PROXY_KEY, UPSTREAM_KEY, USER_KEY] {
            assert!(!text.contains(key), "{path} leaked a key: {text}");
        }
        (status, serde_json::from_str(&text).unwrap())
    }

    async fn post(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::POST, path).await
    }

    async fn list(&self) -> Value {
        let (s, v) = self.call(Method::GET, "/api/agents").await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v
    }

    /// `GET /api/agents` once the start-time reconnect is over. Bounded poll: the reconnect
    /// runs in the daemon's background, and the API says when it is done.
    async fn list_after_start(&self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let v = self.list().await;
            if v["reconnecting"] == false {
                return v;
            }
            assert!(
                Instant::now() < deadline,
                "start-time reconnect still running"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Stops the daemon (flushing its log) and lists the files in the log dir holding
    /// `needle`.
    fn stop_and_grep_logs(&self, needle: &str) -> Vec<PathBuf> {
        assert!(self.home.run(&["stop"]).status.success());
        self.logs_containing(needle)
    }

    fn logs_containing(&self, needle: &str) -> Vec<PathBuf> {
        let mut hits = Vec::new();
        for e in std::fs::read_dir(self.home.path().join("logs")).unwrap() {
            let p = e.unwrap().path();
            if std::fs::read_to_string(&p).unwrap().contains(needle) {
                hits.push(p);
            }
        }
        hits
    }

    /// Chat completions the fake upstream received.
    fn completions(&self) -> Vec<metaclaw_e2e::fake_upstream::RecordedRequest> {
        self.fake
            .requests()
            .into_iter()
            .filter(|r| r.path == "/v1/chat/completions")
            .collect()
    }
}

fn agent<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == name)
        .unwrap_or_else(|| panic!("{name} missing from {list}"))
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn path_of(v: &Value) -> &Path {
    Path::new(v.as_str().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn list_preview_connect_verify_and_disconnect_through_the_admin_api() {
    let m = Machine::new(&["copaw", "ironclaw"]);
    m.write(COPAW, COPAW_CONFIG);
    m.write(IRONCLAW, IRONCLAW_ENV);
    let d = Daemon::start(m, "").await;
    let m = &d.machine;

    // Listed: both installed, neither connected; the config chose no agent.
    let list = d.list_after_start().await;
    assert_eq!(list["agents"].as_array().unwrap().len(), 10, "{list}");
    assert_eq!(list["chosen"], false, "{list}");
    assert_eq!(list["claw_type"], "openclaw", "{list}");
    let copaw = agent(&list, "copaw");
    assert_eq!(copaw["installed"], true, "{copaw}");
    assert_eq!(copaw["config_exists"], true, "{copaw}");
    assert_eq!(copaw["connected"], false, "{copaw}");
    assert_eq!(copaw["backed_up"], false, "{copaw}");
    assert_eq!(path_of(&copaw["binary"]), m.bin().join("copaw"));
    assert_eq!(path_of(&copaw["config"]), m.home().join(COPAW));
    assert_eq!(copaw["points_at"]["model"], "qwen-max", "{copaw}");
    assert_eq!(copaw["points_at"]["api_key"], "sk-…abcd", "{copaw}");
    assert_eq!(agent(&list, "ironclaw")["installed"], true);
    assert_eq!(agent(&list, "zeroclaw")["installed"], false);

    // Preview: what would change, and nothing written.
    let (s, p) = d.post("/api/agents/copaw/preview").await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(p["agent"], "copaw");
    assert_eq!(p["already_connected"], false, "{p}");
    assert_eq!(p["creates"], false, "{p}");
    let change = &p["changes"][0];
    assert_eq!(change["key"], "provider_id", "{p}");
    assert_eq!(change["new"], "metaclaw", "{p}");
    assert_eq!(change["old"], "dashscope", "{p}");
    let base = p["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["key"]
                .as_str()
                .unwrap()
                .ends_with("metaclaw.json base_url")
        })
        .unwrap();
    assert_eq!(base["new"], d.base().as_str(), "{p}");
    // CoPaw has no command that reloads a running app.
    assert_eq!(p["restart_command"], Value::Null, "{p}");
    assert_eq!(m.read(COPAW), COPAW_CONFIG);
    assert!(m.restarts().is_empty(), "{:?}", m.restarts());
    assert!(!d.backup_dir("copaw").exists());

    // Connect: the file points at MetaClaw with the proxy key, the rest kept; one restart.
    let (s, c) = d.post("/api/agents/copaw/connect").await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["changed"], true, "{c}");
    assert_eq!(c["created"], false, "{c}");
    assert_eq!(c["restart"]["outcome"], "no_command", "{c}");
    assert_eq!(c["warnings"].as_array().unwrap().len(), 0, "{c}");
    let written = parse(&m.read(COPAW));
    assert_eq!(written["provider_id"], "metaclaw");
    assert_eq!(written["model"], "fake-model");
    let provider = parse(&m.read(COPAW_PROVIDER));
    assert_eq!(provider["base_url"], d.base().as_str());
    assert_eq!(provider["api_key"], PROXY_KEY);
    assert_eq!(m.read(COPAW_DASHSCOPE.0), COPAW_DASHSCOPE.1);
    assert!(m.restarts().is_empty(), "{:?}", m.restarts());
    assert!(d.backup_dir("copaw").is_dir());

    let list = d.list().await;
    let copaw = agent(&list, "copaw");
    assert_eq!(copaw["connected"], true, "{copaw}");
    assert_eq!(copaw["backed_up"], true, "{copaw}");
    assert_eq!(copaw["points_at"]["base"], d.base().as_str(), "{copaw}");
    assert_eq!(copaw["problem"], Value::Null, "{copaw}");

    // Verify: CoPaw's own request goes through MetaClaw to the upstream, with the
    // upstream's key added by MetaClaw.
    let before = d.completions().len();
    let (s, v) = d.post("/api/agents/copaw/verify").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["status"], 200, "{v}");
    assert_eq!(v["url"], format!("{}/chat/completions", d.base()), "{v}");
    let sent = d.completions();
    assert_eq!(sent.len(), before + 1, "{sent:?}");
    let last = sent.last().unwrap();
    assert_eq!(
        last.header("authorization"),
        Some(format!("Bearer {UPSTREAM_KEY}").as_str())
    );
    assert!(last.raw.contains("ping"), "{}", last.raw);
    // The connection test is not the user's conversation: recorded as a side turn, so no
    // memory extraction or skill evolution ever sends it to the provider.
    let (s, _) = d.call(Method::POST, "/api/recorder/flush").await;
    assert_eq!(s, StatusCode::OK);
    let (_, turns) = d.call(Method::GET, "/api/turns?limit=1000").await;
    let turns = turns["turns"].as_array().unwrap();
    assert!(!turns.is_empty(), "the test request was recorded");
    assert!(turns.iter().all(|t| t["turn_type"] == "side"), "{turns:?}");

    // Connect again: nothing to change, so no write and no second restart.
    let (s, c) = d.post("/api/agents/copaw/connect?verify=true").await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["changed"], false, "{c}");
    assert_eq!(c["restart"]["outcome"], "not_needed", "{c}");
    assert_eq!(c["verify"]["ok"], true, "{c}");
    assert!(m.restarts().is_empty(), "{:?}", m.restarts());

    // IronClaw's .env: its variables set, every comment and other line kept.
    let (s, c) = d.post("/api/agents/ironclaw/connect").await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["changed"], true, "{c}");
    let env = m.read(IRONCLAW);
    for line in [
        "# IronClaw settings (written by `ironclaw onboard`)",
        "DATABASE_URL=postgres://localhost/ironclaw",
        "AGENT_NAME=iron # the name it answers to",
        "HTTP_PORT=3000",
        "LLM_BACKEND=openai_compatible",
    ] {
        assert!(
            env.lines().any(|l| l == line),
            "{line} missing from:\n{env}"
        );
    }
    assert!(env.contains(&d.base()), "{env}");
    assert!(env.contains(PROXY_KEY), "{env}");
    assert_eq!(m.restarts(), ["ironclaw service restart"]);
    let (s, v) = d.post("/api/agents/ironclaw/verify").await;
    assert_eq!((s, &v["ok"]), (StatusCode::OK, &Value::Bool(true)), "{v}");

    // Disconnect: the originals back byte for byte, the backups gone, each agent restarted.
    let (s, r) = d.post("/api/agents/copaw/disconnect").await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["changed"], true, "{r}");
    assert_eq!(r["files"][0]["action"], "restored", "{r}");
    assert_eq!(r["files"][1]["action"], "deleted", "{r}");
    assert_eq!(m.read(COPAW), COPAW_CONFIG);
    assert!(!m.exists(COPAW_PROVIDER));
    assert!(!d.backup_dir("copaw").exists());
    let (s, r) = d.post("/api/agents/ironclaw/disconnect").await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(m.read(IRONCLAW), IRONCLAW_ENV);
    assert_eq!(
        m.restarts(),
        ["ironclaw service restart", "ironclaw service restart"]
    );
    let list = d.list().await;
    assert_eq!(agent(&list, "copaw")["connected"], false, "{list}");
    assert_eq!(agent(&list, "ironclaw")["connected"], false, "{list}");

    // Not connected any more: disconnect and verify say so, touching nothing.
    let (s, r) = d.post("/api/agents/copaw/disconnect").await;
    assert_eq!(s, StatusCode::CONFLICT, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not connected"),
        "{r}"
    );
    let (s, v) = d.post("/api/agents/copaw/verify").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["ok"], false, "{v}");
    assert!(v["error"].is_string(), "{v}");
    assert_eq!(m.read(COPAW), COPAW_CONFIG);
    assert_eq!(m.restarts().len(), 2);

    // Unknown agents: 404 naming the choices, for every action.
    for action in ["preview", "connect", "disconnect", "verify"] {
        let (s, e) = d.post(&format!("/api/agents/nosuchclaw/{action}")).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{action}: {e}");
        let said = e["error"]["message"].as_str().unwrap();
        assert!(said.starts_with("unknown agent `nosuchclaw`"), "{said}");
        assert!(said.contains("copaw"), "{said}");
    }

    // Behind the admin token like the rest of /api.
    let r = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/api/agents", d.port))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);

    let leaked = d.stop_and_grep_logs(PROXY_KEY);
    assert!(leaked.is_empty(), "the proxy key is in {leaked:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_or_missing_configs_are_refused_and_left_alone() {
    // Cut off mid-object, with a key in it a parser's message might quote.
    let corrupt = format!(
        "{{\n  \"models\": {{\n    \"default\": {{ \"api_key\": \"{USER_KEY}\", \"base_url\": \n"
    );
    let m = Machine::new(&["copaw", "ironclaw"]);
    m.write(COPAW, &corrupt);
    let d = Daemon::start(m, "").await;
    let m = &d.machine;
    d.list_after_start().await;

    for action in ["preview", "connect"] {
        let (s, e) = d.post(&format!("/api/agents/copaw/{action}")).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{action}: {e}");
        let said = e["error"]["message"].as_str().unwrap();
        assert!(said.contains("cannot be read"), "{said}");
        assert!(said.contains("nothing was changed"), "{said}");
    }
    assert_eq!(m.read(COPAW), corrupt);
    assert!(!d.backup_dir("copaw").exists());

    let list = d.list().await;
    let copaw = agent(&list, "copaw");
    assert_eq!(copaw["connected"], false, "{copaw}");
    assert!(copaw["problem"].is_string(), "{copaw}");
    let (s, v) = d.post("/api/agents/copaw/verify").await;
    assert_eq!((s, &v["ok"]), (StatusCode::OK, &Value::Bool(false)), "{v}");
    let (s, e) = d.post("/api/agents/copaw/disconnect").await;
    assert_eq!(s, StatusCode::CONFLICT, "{e}");

    // IronClaw is installed but never set up: MetaClaw does not invent its .env.
    let (s, e) = d.post("/api/agents/ironclaw/connect").await;
    assert_eq!(s, StatusCode::CONFLICT, "{e}");
    let said = e["error"]["message"].as_str().unwrap();
    assert!(said.contains("does not exist"), "{said}");
    assert!(!m.exists(IRONCLAW));
    assert!(!m.exists(".ironclaw"));
    assert!(!d.backup_dir("ironclaw").exists());

    assert_eq!(m.read(COPAW), corrupt);
    assert!(m.restarts().is_empty(), "{:?}", m.restarts());
}

#[tokio::test(flavor = "multi_thread")]
async fn start_connects_the_agent_the_config_names() {
    let m = Machine::new(&["copaw", "ironclaw"]);
    m.write(COPAW, COPAW_CONFIG);
    m.write(IRONCLAW, IRONCLAW_ENV);
    let d = Daemon::start(m, "claw_type: copaw\n").await;
    let m = &d.machine;

    let list = d.list_after_start().await;
    assert_eq!(list["claw_type"], "copaw", "{list}");
    assert_eq!(list["chosen"], true, "{list}");
    let copaw = agent(&list, "copaw");
    assert_eq!(copaw["connected"], true, "{copaw}");
    assert_eq!(copaw["points_at"]["base"], d.base().as_str(), "{copaw}");
    let written = parse(&m.read(COPAW_PROVIDER));
    assert_eq!(written["base_url"], d.base().as_str());
    assert_eq!(written["api_key"], PROXY_KEY);
    assert!(m.restarts().is_empty(), "{:?}", m.restarts());
    // Only the named agent.
    assert_eq!(m.read(IRONCLAW), IRONCLAW_ENV);
    assert!(!d.backup_dir("ironclaw").exists());

    // Disconnecting restores the user's file exactly.
    let (s, r) = d.post("/api/agents/copaw/disconnect").await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(m.read(COPAW), COPAW_CONFIG);
}

#[tokio::test(flavor = "multi_thread")]
async fn start_keeps_a_connected_agent_pointed_at_the_new_port() {
    let m = Machine::new(&["copaw"]);
    m.write(COPAW, COPAW_CONFIG);
    let mut d = Daemon::start(m, "").await;
    d.list_after_start().await;
    let (s, c) = d.post("/api/agents/copaw/connect").await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let first = d.base();

    d.restart_on_new_port().await;
    assert_ne!(d.base(), first);
    let list = d.list_after_start().await;
    let copaw = agent(&list, "copaw");
    assert_eq!(copaw["connected"], true, "{copaw}");
    assert_eq!(copaw["points_at"]["base"], d.base().as_str(), "{copaw}");
    let written = parse(&d.machine.read(COPAW_PROVIDER));
    assert_eq!(written["base_url"], d.base().as_str());
    assert!(
        d.machine.restarts().is_empty(),
        "{:?}",
        d.machine.restarts()
    );
    let (s, v) = d.post("/api/agents/copaw/verify").await;
    assert_eq!((s, &v["ok"]), (StatusCode::OK, &Value::Bool(true)), "{v}");

    // One backup, of the user's original: disconnect still restores it exactly.
    let (s, r) = d.post("/api/agents/copaw/disconnect").await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(d.machine.read(COPAW), COPAW_CONFIG);
}

#[tokio::test(flavor = "multi_thread")]
async fn start_without_claw_type_leaves_agents_alone() {
    let m = Machine::new(&["copaw", "ironclaw"]);
    m.write(COPAW, COPAW_CONFIG);
    m.write(IRONCLAW, IRONCLAW_ENV);
    let d = Daemon::start(m, "").await;
    let m = &d.machine;

    let list = d.list_after_start().await;
    assert_eq!(list["chosen"], false, "{list}");
    for name in ["copaw", "ironclaw"] {
        let a = agent(&list, name);
        assert_eq!(a["installed"], true, "{a}");
        assert_eq!(a["connected"], false, "{a}");
        assert!(!d.backup_dir(name).exists());
    }
    assert_eq!(m.read(COPAW), COPAW_CONFIG);
    assert_eq!(m.read(IRONCLAW), IRONCLAW_ENV);
    assert!(m.restarts().is_empty(), "{:?}", m.restarts());
    assert!(!d.home.path().join("agent-backup").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_restart_that_prints_the_key_does_not_leak_it() {
    let m = Machine::new(&["picoclaw"]);
    // A restart that fails, dumping the config it was given on the way out.
    m.script(
        "picoclaw",
        "echo starting; grep -o '\"api_key\": \"mc-[^\"]*' \"$HOME/.picoclaw/config.json\" >&2; exit 1",
    );
    m.write(PICOCLAW, PICOCLAW_CONFIG);
    let d = Daemon::start(m, "").await;
    d.list_after_start().await;

    // `call` fails on any key in the body; the failure itself is still reported.
    let (s, c) = d.post("/api/agents/picoclaw/connect").await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["changed"], true, "{c}");
    assert_eq!(c["restart"]["outcome"], "failed", "{c}");
    assert_eq!(c["restart"]["code"], 1, "{c}");
    let detail = c["restart"]["detail"].as_str().unwrap();
    assert!(detail.contains("\"api_key\": \"mc-"), "{c}");
    assert_eq!(c["warnings"].as_array().unwrap().len(), 1, "{c}");
    assert!(d.machine.read(PICOCLAW).contains(PROXY_KEY));

    let leaked = d.stop_and_grep_logs(PROXY_KEY);
    assert!(leaked.is_empty(), "the proxy key is in {leaked:?}");
}

/// At start the restart's warning goes to the log; its detail (the command's last output
/// line) quotes the proxy key here.
#[tokio::test(flavor = "multi_thread")]
async fn a_failing_restart_at_start_does_not_log_the_key() {
    let m = Machine::new(&["picoclaw"]);
    m.script(
        "picoclaw",
        "echo starting; grep -o '\"api_key\": \"mc-[^\"]*' \"$HOME/.picoclaw/config.json\" >&2; exit 1",
    );
    m.write(PICOCLAW, PICOCLAW_CONFIG);
    let d = Daemon::start(m, "claw_type: picoclaw\n").await;
    d.list_after_start().await;
    assert!(d.machine.read(PICOCLAW).contains(PROXY_KEY));
    let leaked = d.stop_and_grep_logs(PROXY_KEY);
    assert!(leaked.is_empty(), "the proxy key is in {leaked:?}");
    // The warning itself is logged, key masked.
    let warned =
        d.logs_containing("`picoclaw gateway restart` failed (exit 1): \"api_key\": \"mc-");
    assert!(!warned.is_empty(), "no restart warning in the log");
}

#[tokio::test(flavor = "multi_thread")]
async fn nemoclaw_is_verified_with_the_proxy_key_its_file_does_not_hold() {
    // NemoClaw keeps its credential in OpenShell; its file names only endpoint and model.
    let m = Machine::new(&["openclaw"]);
    m.write(
        ".nemoclaw/config.json",
        "{\n  \"endpointType\": \"build\",\n  \"model\": \"nvidia/nemotron\",\n  \"profile\": \"default\"\n}\n",
    );
    let d = Daemon::start(m, "").await;
    d.list_after_start().await;
    let (s, c) = d.post("/api/agents/nemoclaw/connect").await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let written = parse(&d.machine.read(".nemoclaw/config.json"));
    assert_eq!(written["endpointUrl"], d.base(), "{written}");
    assert!(!written.to_string().contains(PROXY_KEY));

    let (s, v) = d.post("/api/agents/nemoclaw/verify").await;
    assert_eq!((s, &v["ok"]), (StatusCode::OK, &Value::Bool(true)), "{v}");
    assert!(!v.to_string().contains(PROXY_KEY), "{v}");
    let (s, _) = d.post("/api/agents/nemoclaw/disconnect").await;
    assert_eq!(s, StatusCode::OK);
}

const OPENCLAW: &str = ".openclaw/openclaw.json";
/// An OpenClaw config as its onboarding leaves it: its own provider, signed in by itself.
const OPENCLAW_CONFIG: &str = r#"{
  // the user's own
  "agents": { "defaults": { "model": { "primary": "anthropic/claude-sonnet" } } },
  "plugins": { "slots": { "memory": "memory-core" } },
}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn openclaw_switches_between_proxy_and_plugin_and_comes_back_whole() {
    let m = Machine::new(&["openclaw"]);
    m.write(OPENCLAW, OPENCLAW_CONFIG);
    let mut d = Daemon::start(m, "").await;
    let list = d.list_after_start().await;
    let with_plugin = list["with_plugin"].as_array().unwrap();
    assert!(
        with_plugin.contains(&json!("openclaw")) && with_plugin.contains(&json!("claude-code"))
    );
    assert!(!with_plugin.contains(&json!("copaw")), "{list}");
    assert_eq!(list["plugin_only"], json!(["claude-code"]), "{list}");

    // The preview of the plugin writes nothing and names the engine slot.
    let (s, p) = d.post("/api/agents/openclaw/preview?plugin=true").await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert!(p["changes"].to_string().contains("contextEngine"), "{p}");
    assert_eq!(d.machine.read(OPENCLAW), OPENCLAW_CONFIG);

    // Proxy first, then the plugin: the proxy's edits are undone, so the agent never goes
    // through both; the user's provider is its own again.
    let (s, c) = d.post("/api/agents/openclaw/connect").await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert!(d.machine.read(OPENCLAW).contains("metaclaw/"));
    let (s, c) = d.post("/api/agents/openclaw/connect?plugin=true").await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let written = d.machine.read(OPENCLAW);
    assert!(
        !written.contains("metaclaw/") && !written.contains(PROXY_KEY),
        "{written}"
    );
    assert!(written.contains("anthropic/claude-sonnet") && written.contains("// the user's own"));
    assert!(
        written.contains("\"contextEngine\": \"metaclaw\""),
        "{written}"
    );
    let package = d.home.path().join("integrations/openclaw");
    assert!(package.join("openclaw.plugin.json").is_file());
    assert!(written.contains(package.to_str().unwrap()), "{written}");
    let oc = agent(&d.list().await, "openclaw").clone();
    assert_eq!(
        (&oc["connected"], &oc["mode"]),
        (&json!(true), &json!("plugin")),
        "{oc}"
    );

    // The engine slot reset by hand (as `openclaw plugins uninstall` does): a restart puts
    // the plugin back, as it was connected, rather than pointing OpenClaw at the proxy.
    let reset = written.replace(
        "\"contextEngine\": \"metaclaw\"",
        "\"contextEngine\": \"legacy\"",
    );
    assert_ne!(reset, written);
    d.machine.write(OPENCLAW, &reset);
    d.restart_on_new_port().await;
    let list = d.list_after_start().await;
    let oc = agent(&list, "openclaw");
    assert_eq!(
        (&oc["connected"], &oc["mode"]),
        (&json!(true), &json!("plugin")),
        "{oc}"
    );
    assert_eq!(d.machine.read(OPENCLAW), written);

    // And back to the proxy, then off: the user's bytes.
    let (s, c) = d.post("/api/agents/openclaw/connect").await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let proxied = d.machine.read(OPENCLAW);
    assert!(
        proxied.contains("metaclaw/") && !proxied.contains("contextEngine"),
        "{proxied}"
    );
    let (s, r) = d.post("/api/agents/openclaw/disconnect").await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(d.machine.read(OPENCLAW), OPENCLAW_CONFIG);
}
