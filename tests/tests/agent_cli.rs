//! `metaclaw agent status | connect | disconnect` and `metaclaw uninstall` through the real
//! binary, over a temporary `$HOME` holding realistic CoPaw, IronClaw and ZeroClaw configs and
//! a `PATH` of fake agent binaries that log every call, so restarts are observable. Every run
//! is checked for the proxy key in its output.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::daemon::{Home, PROXY_KEY, free_port, stdout};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::Value;

/// CoPaw's global active model (the main file) and the provider MetaClaw registers.
const COPAW: &str = ".copaw.secret/providers/active_model.json";
const COPAW_PROVIDER: &str = ".copaw.secret/providers/custom/metaclaw.json";
const IRONCLAW: &str = ".ironclaw/.env";
const ZEROCLAW: &str = ".zeroclaw/config.toml";

/// The user's own provider keys, in the agents' configs: never printed either.
const COPAW_USER_KEY: &str = "sk-user-copaw-0123456789abcdef";
const ZEROCLAW_USER_KEY: &str = "sk-or-v1-user-zeroclaw-0123456789";

/// CoPaw 1.0's global active model, as `copaw models` writes it (`json.dump`, indent 2).
const COPAW_CONFIG: &str = "{\n  \"provider_id\": \"dashscope\",\n  \"model\": \"qwen-max\"\n}";

/// The rest of a CoPaw home: its agents (the default one with a model of its own, which
/// CoPaw prefers to the global one) and the built-in provider holding the user's key.
const COPAW_FILES: &[(&str, &str)] = &[
    (
        ".copaw/config.json",
        r#"{
  "agents": {
    "active_agent": "default",
    "profiles": {
      "default": {"id": "default", "workspace_dir": "~/.copaw/workspaces/default", "enabled": true}
    }
  },
  "show_tool_details": true
}
"#,
    ),
    (
        ".copaw/workspaces/default/agent.json",
        r#"{
  "id": "default",
  "name": "Default Agent",
  "active_model": {
    "provider_id": "dashscope",
    "model": "qwen-max"
  },
  "language": "en"
}"#,
    ),
    (
        ".copaw.secret/providers/builtin/dashscope.json",
        r#"{
  "id": "dashscope",
  "name": "DashScope",
  "base_url": "https://dashscope.aliyuncs.com/compatible-mode/v1",
  "api_key": "sk-user-copaw-0123456789abcdef"
}"#,
    ),
];

const IRONCLAW_ENV: &str = "# IronClaw settings (written by `ironclaw onboard`)
DATABASE_URL=postgres://ironclaw@localhost/ironclaw
LLM_BACKEND=nearai
NEARAI_MODEL=claude-3-5-sonnet

# keep this one
AGENT_NAME=\"my helper\"
";

const ZEROCLAW_TOML: &str = r#"# ZeroClaw configuration
# (edited by hand: keep the comments)
default_provider = "openrouter"
default_model = "anthropic/claude-sonnet-4"
api_key = "sk-or-v1-user-zeroclaw-0123456789"
default_temperature = 0.7

[memory]
backend = "sqlite"   # the default
auto_save = true

[gateway]
port = 3000
"#;

/// A MetaClaw home, a user home with agent configs, and fake agent binaries on `PATH`.
struct World {
    home: Home,
    user: tempfile::TempDir,
    bin: tempfile::TempDir,
    /// Whether the proxy key comes from the environment (as `Home::cmd` sets it) or from the
    /// secret store, where `connect` creates it.
    env_proxy_key: bool,
}

impl World {
    fn new(config: &str) -> World {
        let world = World {
            home: Home::new(config),
            user: tempfile::tempdir().unwrap(),
            bin: tempfile::tempdir().unwrap(),
            env_proxy_key: true,
        };
        for agent in ["copaw", "ironclaw", "zeroclaw"] {
            world.fake_binary(agent);
        }
        world
    }

    /// With the three agents set up as their users left them.
    fn with_agents(config: &str) -> World {
        let world = World::new(config);
        world.write(COPAW, COPAW_CONFIG);
        for (rel, text) in COPAW_FILES {
            world.write(rel, text);
        }
        world.write(IRONCLAW, IRONCLAW_ENV);
        world.write(ZEROCLAW, ZEROCLAW_TOML);
        world
    }

    /// An executable that appends its name and arguments to `restarts.log`.
    fn fake_binary(&self, name: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.bin.path().join(name);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho \"{name} $*\" >> '{}'\n",
                self.log().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn log(&self) -> PathBuf {
        self.bin.path().join("restarts.log")
    }

    /// Every agent command run so far, one per line.
    fn restarts(&self) -> Vec<String> {
        match std::fs::read_to_string(self.log()) {
            Ok(t) => t.lines().map(str::to_owned).collect(),
            Err(_) => Vec::new(),
        }
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.user.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.user.path().join(rel)).unwrap()
    }

    /// Every CoPaw file as the user left it, and MetaClaw's provider gone.
    fn assert_copaw_restored(&self) {
        assert_eq!(self.read(COPAW), COPAW_CONFIG);
        for (rel, text) in COPAW_FILES {
            assert_eq!(&self.read(rel), text, "{rel}");
        }
        assert!(!self.user.path().join(COPAW_PROVIDER).exists());
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.home.cmd("file", args);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.bin.path().to_owned()];
        dirs.extend(std::env::split_paths(&path));
        c.env("HOME", self.user.path())
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("HERMES_HOME");
        if !self.env_proxy_key {
            c.env_remove("METACLAW_PROXY_API_KEY");
        }
        c
    }

    /// Runs `metaclaw ARGS` and checks no key leaked into its output.
    fn run(&self, args: &[&str]) -> Output {
        let o = self.cmd(args).output().unwrap();
        self.assert_no_leak(&o);
        o
    }

    fn assert_no_leak(&self, o: &Output) {
        let all = format!("{}{}", stdout(o), stderr(o));
        let mut secrets = vec![
            PROXY_KEY.to_owned(),
            COPAW_USER_KEY.to_owned(),
            ZEROCLAW_USER_KEY.to_owned(),
        ];
        secrets.extend(self.stored_proxy_key());
        for s in secrets {
            assert!(!all.contains(&s), "a key leaked into the output:\n{all}");
        }
    }

    /// The proxy key `connect` created in the file store, when it did.
    fn stored_proxy_key(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.secrets_file()).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("proxy.api_key: "))
            .map(|k| k.trim().to_owned())
    }

    fn secrets_file(&self) -> PathBuf {
        self.home.path().join("secrets.yaml")
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(o.status.success(), "metaclaw {args:?} failed: {o:?}");
        stdout(&o)
    }

    fn status_json(&self) -> Vec<Value> {
        serde_json::from_str::<Value>(&self.ok(&["agent", "status", "--json"]))
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    fn status_of(&self, agent: &str) -> Value {
        serde_json::from_str(&self.ok(&["agent", "status", agent, "--json"])).unwrap()
    }

    fn backup_root(&self) -> PathBuf {
        self.home.path().join("agent-backup")
    }

    fn claw_type(&self) -> String {
        self.ok(&["config", "get", "claw_type"]).trim().to_owned()
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn find<'a>(list: &'a [Value], agent: &str) -> &'a Value {
    list.iter()
        .find(|s| s["agent"] == agent)
        .unwrap_or_else(|| panic!("{agent} missing from {list:?}"))
}

fn dir_is_empty_or_missing(p: &Path) -> bool {
    std::fs::read_dir(p).map_or(true, |mut d| d.next().is_none())
}

#[test]
fn dry_run_connect_again_status_and_disconnect_restore_every_file() {
    let port = free_port();
    let w = World::with_agents(&format!("proxy:\n  port: {port}\n"));
    let base = format!("http://127.0.0.1:{port}/v1");

    let before = w.status_json();
    for agent in ["copaw", "ironclaw", "zeroclaw"] {
        let s = find(&before, agent);
        assert_eq!(s["installed"], true, "{s}");
        assert_eq!(s["connected"], false, "{s}");
        assert_eq!(s["backed_up"], false, "{s}");
    }
    assert_eq!(
        find(&before, "copaw")["points_at"]["base"],
        "https://dashscope.aliyuncs.com/compatible-mode/v1"
    );
    let table = w.ok(&["agent", "status"]);
    let copaw_line = table.lines().find(|l| l.starts_with("copaw")).unwrap();
    assert!(copaw_line.ends_with("not connected"), "{table}");
    assert!(table.contains(&w.user.path().join(COPAW).display().to_string()));

    // A dry run shows the change and writes nothing: no file, no backup, no restart.
    for (agent, key) in [
        ("copaw", "provider_id"),
        ("ironclaw", "LLM_BASE_URL"),
        ("zeroclaw", "default_provider"),
    ] {
        let out = w.ok(&["agent", "connect", agent, "--dry-run"]);
        assert!(out.contains("Dry run"), "{out}");
        assert!(out.contains(key), "{out}");
        assert!(out.contains(&base), "{out}");
        assert!(out.contains(" → "), "{out}");
    }
    assert_eq!(w.read(COPAW), COPAW_CONFIG);
    assert_eq!(w.read(IRONCLAW), IRONCLAW_ENV);
    assert_eq!(w.read(ZEROCLAW), ZEROCLAW_TOML);
    assert!(!w.backup_root().exists());
    assert!(!w.secrets_file().exists());
    assert!(w.restarts().is_empty(), "{:?}", w.restarts());

    // Connect: the file changes, every comment and unrelated setting stays, one restart.
    let out = w.ok(&["agent", "connect", "zeroclaw"]);
    assert!(out.contains("Connected zeroclaw"), "{out}");
    assert!(out.contains("Backup of the original"), "{out}");
    assert!(out.contains("Restarted zeroclaw"), "{out}");
    assert!(out.contains("not running"), "{out}");
    let connected = w.read(ZEROCLAW);
    assert!(
        connected.contains(&format!("default_provider = \"custom:{base}\"")),
        "{connected}"
    );
    assert!(connected.contains(&format!("api_key = \"{PROXY_KEY}\"")));
    for kept in [
        "# ZeroClaw configuration",
        "# (edited by hand: keep the comments)",
        "default_temperature = 0.7",
        "backend = \"sqlite\"   # the default",
        "[gateway]",
    ] {
        assert!(connected.contains(kept), "lost `{kept}`:\n{connected}");
    }
    assert_eq!(w.restarts(), ["zeroclaw service restart"]);

    // Again: nothing to change, nothing written, no restart.
    let out = w.ok(&["agent", "connect", "zeroclaw"]);
    assert!(out.contains("already points at MetaClaw"), "{out}");
    assert_eq!(w.read(ZEROCLAW), connected);
    assert_eq!(w.restarts().len(), 1, "{:?}", w.restarts());

    // CoPaw has no reload command: connecting it runs nothing and says to restart it.
    let out = w.ok(&["agent", "connect", "copaw"]);
    assert!(out.contains("copaw app"), "{out}");
    let agent = w.read(COPAW_FILES[1].0);
    assert!(agent.contains("\"provider_id\": \"metaclaw\""), "{agent}");
    assert!(w.read(COPAW_PROVIDER).contains(&base));
    w.ok(&["agent", "connect", "ironclaw"]);
    assert_eq!(
        w.restarts(),
        ["zeroclaw service restart", "ironclaw service restart"]
    );
    let after = w.status_json();
    for agent in ["copaw", "ironclaw", "zeroclaw"] {
        let s = find(&after, agent);
        assert_eq!(s["connected"], true, "{s}");
        assert_eq!(s["backed_up"], true, "{s}");
        assert_eq!(s["points_at"]["base"], base.as_str(), "{s}");
        let key = s["points_at"]["api_key"].as_str().unwrap();
        assert!(key.contains('…') && key != PROXY_KEY, "{s}");
    }
    let table = w.ok(&["agent", "status"]);
    let copaw_line = table.lines().find(|l| l.starts_with("copaw")).unwrap();
    assert!(copaw_line.ends_with(" connected"), "{table}");
    assert!(table.contains(&base), "{table}");

    // One by name, then every other connected agent: byte-identical originals, one
    // restart each.
    let out = w.ok(&["agent", "disconnect", "zeroclaw"]);
    assert!(out.contains("restored"), "{out}");
    assert_eq!(w.read(ZEROCLAW), ZEROCLAW_TOML);
    let out = w.ok(&["agent", "disconnect"]);
    assert!(
        out.contains("Disconnected copaw") && out.contains("Disconnected ironclaw"),
        "{out}"
    );
    assert!(!out.contains("Disconnected zeroclaw"), "{out}");
    w.assert_copaw_restored();
    assert_eq!(w.read(IRONCLAW), IRONCLAW_ENV);
    assert_eq!(w.restarts().len(), 4, "{:?}", w.restarts());
    assert!(dir_is_empty_or_missing(&w.backup_root()));
    for agent in ["copaw", "ironclaw", "zeroclaw"] {
        let s = w.status_of(agent);
        assert_eq!(s["connected"], false, "{s}");
        assert_eq!(s["backed_up"], false, "{s}");
    }

    // Nothing left to restore.
    let out = w.ok(&["agent", "disconnect"]);
    assert!(out.contains("No agent is connected"), "{out}");
    assert_eq!(w.restarts().len(), 4);
}

#[test]
fn connect_defaults_to_claw_type_and_disconnecting_it_forgets_the_choice() {
    let mut w = World::with_agents("claw_type: copaw\n");
    w.env_proxy_key = false;

    // No proxy key yet: the dry run does not create one either.
    let out = w.ok(&["agent", "connect", "--dry-run"]);
    assert!(out.contains("no proxy key yet"), "{out}");
    assert!(!w.secrets_file().exists());
    assert_eq!(w.read(COPAW), COPAW_CONFIG);

    let out = w.ok(&["agent", "connect"]);
    assert!(out.contains("Connected copaw"), "{out}");
    let key = w.stored_proxy_key().unwrap();
    assert!(w.read(COPAW_PROVIDER).contains(&key));
    assert_ne!(w.read(COPAW), COPAW_CONFIG);
    let table = w.ok(&["agent", "status"]);
    assert!(table.contains("copaw (claw_type)"), "{table}");

    // Another agent comes and goes without touching the choice.
    w.ok(&["agent", "connect", "ironclaw"]);
    let out = w.ok(&["agent", "disconnect", "ironclaw"]);
    assert!(!out.contains("claw_type"), "{out}");
    assert_eq!(w.claw_type(), "copaw");

    let out = w.ok(&["agent", "disconnect", "copaw"]);
    assert!(out.contains("claw_type"), "{out}");
    w.assert_copaw_restored();
    assert_eq!(w.claw_type(), "none");

    // With `none` there is nothing to default to: a usage error naming the choices.
    let o = w.run(&["agent", "connect"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stderr(&o).contains("copaw, ironclaw"), "{o:?}");
    assert_eq!(w.read(COPAW), COPAW_CONFIG);
}

#[test]
fn an_unknown_agent_is_a_usage_error() {
    let w = World::with_agents("");
    for args in [
        &["agent", "connect", "clawdbot"][..],
        &["agent", "connect", "clawdbot", "--dry-run"],
        &["agent", "disconnect", "clawdbot"],
        &["agent", "status", "clawdbot"],
    ] {
        let o = w.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = stderr(&o);
        assert!(err.contains("clawdbot"), "{err}");
        assert!(err.contains("openclaw") && err.contains("hermes"), "{err}");
    }
    assert!(!w.backup_root().exists());
    assert!(w.restarts().is_empty());
}

#[test]
fn a_corrupt_or_missing_agent_config_fails_and_changes_nothing() {
    let w = World::new("");
    let corrupt =
        "{\n  \"models\": {\"default\": {\"api_key\": \"sk-user-copaw-0123456789abcdef\"\n";
    w.write(COPAW, corrupt);

    for args in [
        &["agent", "connect", "copaw"][..],
        &["agent", "connect", "copaw", "--dry-run"],
    ] {
        let o = w.run(args);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let err = stderr(&o);
        assert!(err.contains("cannot be read"), "{err}");
        assert!(err.contains(COPAW), "{err}");
    }
    assert_eq!(w.read(COPAW), corrupt);
    assert!(!w.backup_root().exists());
    assert!(w.restarts().is_empty());
    let s = w.status_of("copaw");
    assert!(s["problem"].as_str().is_some_and(|p| !p.is_empty()), "{s}");

    // IronClaw installed (its binary is on PATH) but never set up: no .env to edit.
    let o = w.run(&["agent", "connect", "ironclaw"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stderr(&o).contains("does not exist"), "{o:?}");
    assert!(!w.user.path().join(IRONCLAW).exists());
    assert!(!w.backup_root().exists());
    assert!(w.restarts().is_empty());
}

/// A home whose upstream is the fake (or a dead port), as `setup` leaves it.
fn daemon_world(upstream_base: &str, port: u16) -> World {
    let w = World::with_agents(&format!(
        "llm:\n  provider: custom\n  api: openai\n  api_base: {upstream_base}\n  model_id: fake-model\nproxy:\n  port: {port}\nskills:\n  enabled: false\nmemory:\n  enabled: false\n"
    ));
    std::fs::write(
        w.secrets_file(),
        "llm.api_key: sk-stored-agent-cli-1234567890\n",
    )
    .unwrap();
    w
}

/// `metaclaw start --daemon` with this world's `HOME` and `PATH`, so the daemon sees the
/// fake agents, never the real ones.
async fn start_daemon(w: &World, extra: &[&str]) {
    let mut args = vec!["start", "--daemon"];
    args.extend_from_slice(extra);
    let mut start = w.cmd(&args);
    let o = tokio::task::spawn_blocking(move || start.output().unwrap())
        .await
        .unwrap();
    assert!(o.status.success(), "{o:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_while_running_points_at_the_running_port_and_verifies() {
    let fake = FakeUpstream::start(FakeOptions {
        api_key: Some("sk-stored-agent-cli-1234567890".into()),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    // The config says one port; this run listens on another.
    let (configured, running) = (free_port(), free_port());
    let w = daemon_world(&fake.base_url_openai(), configured);
    start_daemon(&w, &["--port", &running.to_string()]).await;
    let before = fake.requests().len();

    let o = {
        let mut c = w.cmd(&["agent", "connect", "copaw"]);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    };
    w.assert_no_leak(&o);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("Verified"), "{out}");
    assert!(out.contains("answered 200"), "{out}");
    assert!(
        w.read(COPAW_PROVIDER)
            .contains(&format!("http://127.0.0.1:{running}/v1")),
        "{}",
        w.read(COPAW_PROVIDER)
    );
    // The verify request went through MetaClaw to the upstream.
    let reqs = fake.requests();
    assert!(
        reqs[before..]
            .iter()
            .any(|r| r.path.contains("chat/completions")),
        "{reqs:?}"
    );

    // Uninstall stops the running MetaClaw first, then undoes the rest.
    let pid = std::fs::read_to_string(w.home.path().join("run/metaclaw.pid")).unwrap();
    let o = {
        let mut c = w.cmd(&["uninstall", "--yes"]);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    };
    w.assert_no_leak(&o);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.contains(&format!("MetaClaw stopped (PID {})", pid.trim())),
        "{out}"
    );
    assert!(out.contains("Disconnected copaw"), "{out}");
    w.assert_copaw_restored();
    assert!(!w.home.path().exists());
    assert!(
        !std::path::Path::new(&format!("/proc/{}", pid.trim())).exists()
            || std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
                .is_ok_and(|s| s.contains(") Z ")),
        "MetaClaw (PID {pid}) still runs"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_verify_is_exit_1_and_the_agent_stays_connected() {
    // Nothing listens upstream: MetaClaw answers, but with an error.
    let dead = format!("http://127.0.0.1:{}/v1", free_port());
    let port = free_port();
    let w = daemon_world(&dead, port);
    start_daemon(&w, &[]).await;

    let o = {
        let mut c = w.cmd(&["agent", "connect", "copaw"]);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    };
    w.assert_no_leak(&o);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = stderr(&o);
    assert!(err.contains("verify failed"), "{err}");
    assert!(err.contains("stays connected"), "{err}");
    assert!(stdout(&o).contains("Connected copaw"), "{o:?}");
    let s = w.status_of("copaw");
    assert_eq!(s["connected"], true, "{s}");
    assert!(w.restarts().is_empty(), "{:?}", w.restarts());
}

/// A home with a chosen agent, a fallback and keys in the file store; copaw and zeroclaw
/// connected with a proxy key `connect` created.
fn installed_world() -> World {
    let mut w = World::with_agents(
        "claw_type: copaw\nllm:\n  fallbacks:\n    - name: backup\n      api_base: https://api.example.com/v1\n      model_id: m\n",
    );
    w.env_proxy_key = false;
    std::fs::write(
        w.secrets_file(),
        "llm.api_key: sk-primary-agent-cli-1234567890\nllm.fallbacks.backup.api_key: sk-fallback-agent-cli-1234567890\nskills.embedding_api_key: sk-embed-agent-cli-1234567890\nscheduler.calendar.token: '{\"refresh_token\":\"1//calendar-agent-cli\"}'\n",
    )
    .unwrap();
    std::fs::create_dir_all(w.home.path().join("skills/debugging")).unwrap();
    std::fs::write(
        w.home.path().join("skills/debugging/SKILL.md"),
        "# Debugging\n",
    )
    .unwrap();
    w.ok(&["agent", "connect", "copaw"]);
    w.ok(&["agent", "connect", "zeroclaw"]);
    let key = w.stored_proxy_key().unwrap();
    assert!(w.read(COPAW_PROVIDER).contains(&key));
    assert_eq!(w.restarts().len(), 1);
    w
}

fn assert_agents_restored(w: &World) {
    w.assert_copaw_restored();
    assert_eq!(w.read(ZEROCLAW), ZEROCLAW_TOML);
    assert_eq!(w.read(IRONCLAW), IRONCLAW_ENV);
    assert_eq!(
        w.restarts(),
        ["zeroclaw service restart", "zeroclaw service restart"]
    );
}

#[test]
fn uninstall_yes_restores_agents_deletes_secrets_and_the_data_dir_once() {
    let w = installed_world();
    let home = w.home.path().to_owned();

    let out = w.ok(&["uninstall", "--yes"]);
    assert!(
        out.contains("Disconnected copaw") && out.contains("Disconnected zeroclaw"),
        "{out}"
    );
    // llm, the fallback, the embedding key and the proxy key.
    assert!(out.contains("Deleted 5 MetaClaw secrets"), "{out}");
    assert!(
        out.contains(&format!("Removed {}", home.display())),
        "{out}"
    );
    assert!(out.contains("program itself stays"), "{out}");
    assert_agents_restored(&w);
    assert!(!home.exists());

    // Again: nothing to do, and nothing recreated.
    let out = w.ok(&["uninstall", "--yes"]);
    assert!(out.contains("Nothing to do"), "{out}");
    assert!(!out.contains("Deleted"), "{out}");
    assert!(!home.exists());
    assert_eq!(w.restarts().len(), 2);
}

#[test]
fn uninstall_without_a_terminal_or_with_keep_data_keeps_the_data() {
    let w = installed_world();
    let home = w.home.path().to_owned();

    // `output()` gives the child no terminal on stdin: nobody to confirm.
    let out = w.ok(&["uninstall"]);
    assert!(out.contains("Deleted 5 MetaClaw secrets"), "{out}");
    assert!(out.contains("no terminal"), "{out}");
    assert!(out.contains("--yes"), "{out}");
    assert_agents_restored(&w);
    assert!(home.join("skills/debugging/SKILL.md").is_file());
    assert!(home.join("config.yaml").is_file());
    // The file store is empty: what it writes when its last account goes.
    let secrets = std::fs::read_to_string(w.secrets_file()).unwrap();
    assert_eq!(secrets.trim(), "{}", "{secrets}");
    // The kept config no longer brings copaw back on the next start.
    assert_eq!(w.claw_type(), "none");

    let out = w.ok(&["uninstall", "--keep-data"]);
    assert!(out.contains("--keep-data"), "{out}");
    assert!(!out.contains("Deleted"), "{out}");
    assert!(!out.contains("Disconnected"), "{out}");
    assert!(home.join("skills/debugging/SKILL.md").is_file());
    assert_eq!(w.restarts().len(), 2);

    let o = w.run(&["uninstall", "--yes", "--keep-data"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(home.exists());
}

#[test]
fn uninstall_never_removes_a_directory_that_is_not_metaclaws() {
    let w = World::new("");
    let home = w.home.path().to_owned();
    std::fs::remove_file(home.join("config.yaml")).unwrap();
    std::fs::write(home.join("thesis.tex"), "\\documentclass{article}\n").unwrap();

    let out = w.ok(&["uninstall", "--yes"]);
    assert!(out.contains("does not look like MetaClaw's"), "{out}");
    assert!(home.join("thesis.tex").is_file());
}

/// `metaclaw ARGS` at a terminal (`script` gives it one) typing `input`.
fn at_terminal(w: &World, args: &str, input: &str) -> Output {
    // util-linux's `script` (Debian's essential bsdutils) gives the command a pseudo-terminal.
    let script = Path::new("/usr/bin/script");
    assert!(
        script.exists(),
        "this test needs util-linux's /usr/bin/script"
    );
    let template = w.cmd(&[]);
    let mut c = Command::new(script);
    c.args([
        "-qec",
        &format!("'{}' {args}", common::daemon::bin().display()),
        "/dev/null",
    ]);
    for (k, v) in template.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    common::daemon::run_with_stdin(c, input)
}

#[test]
fn uninstall_at_a_terminal_asks_before_removing_the_data() {
    let w = installed_world();
    let home = w.home.path().to_owned();

    let o = at_terminal(&w, "uninstall", "n\n");
    w.assert_no_leak(&o);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.contains(&format!("Remove {} (", home.display())) && out.contains("[y/N]"),
        "{out}"
    );
    assert!(out.contains("not confirmed"), "{out}");
    assert!(home.join("skills/debugging/SKILL.md").is_file());
    assert_agents_restored(&w);

    let o = at_terminal(&w, "uninstall", "y\n");
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).contains(&format!("Removed {}", home.display())),
        "{o:?}"
    );
    assert!(!home.exists());
}
