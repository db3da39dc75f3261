//! The JSON adapters through the shared driver over a temp home: connect writes the file,
//! a second connect touches nothing, disconnect gives the original bytes back, and after a
//! user edit only MetaClaw's keys are reverted.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::time::Duration;

use metaclaw_claws::adapters::by_name;
use metaclaw_claws::driver::{Restart, connect, disconnect, endpoint, status};
use metaclaw_claws::{CommandOutput, Env, Format, Runner, Target, doc};
use serde_json::json;

struct NoRunner;

impl Runner for NoRunner {
    fn run(&self, _argv: &[String], _timeout: Duration) -> std::io::Result<CommandOutput> {
        Err(std::io::Error::other("no agent binaries in tests"))
    }
}

/// A home with no agent on `PATH`, so no restart is attempted.
fn env(home: &Path) -> Env {
    Env {
        home: home.to_path_buf(),
        path: Vec::new(),
        vars: Default::default(),
        runner: Box::new(NoRunner),
    }
}

fn fixture(rel: &str) -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel),
    )
    .unwrap()
}

fn target() -> Target {
    Target::local(30123, "mc-proxy-key-7f3a", "kimi-k2.5")
}

#[test]
fn openclaw_connects_and_disconnects_through_the_driver() {
    let home = tempfile::tempdir().unwrap();
    let backups = home.path().join(".metaclaw/agent-backup");
    let env = env(home.path());
    let a = by_name("openclaw").unwrap();
    let file = home.path().join(".openclaw/openclaw.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let original = fixture("openclaw/openclaw.json");
    fs::write(&file, &original).unwrap();

    let c = connect(&*a, &env, &target(), &backups).unwrap();
    assert!(c.changed);
    let written = fs::read_to_string(&file).unwrap();
    assert!(written.contains("// OpenClaw configuration — hand-edited, keep the comments!"));
    assert!(written.contains("primary: \"metaclaw/kimi-k2.5\""));

    let again = connect(&*a, &env, &target(), &backups).unwrap();
    assert!(!again.changed);
    assert_eq!(fs::read_to_string(&file).unwrap(), written);

    disconnect(&*a, &env, &backups).unwrap();
    assert_eq!(fs::read_to_string(&file).unwrap(), original);
}

#[test]
fn openclaw_keeps_the_users_later_edit_on_disconnect() {
    let home = tempfile::tempdir().unwrap();
    let backups = home.path().join(".metaclaw/agent-backup");
    let env = env(home.path());
    let a = by_name("openclaw").unwrap();
    let file = home.path().join(".openclaw/openclaw.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, fixture("openclaw/openclaw.json")).unwrap();
    connect(&*a, &env, &target(), &backups).unwrap();

    // The user moves the gateway while connected.
    let connected = fs::read_to_string(&file).unwrap();
    let edited = connected.replace("port: 18789, // the default", "port: 18800, // moved");
    assert_ne!(edited, connected);
    fs::write(&file, &edited).unwrap();

    disconnect(&*a, &env, &backups).unwrap();
    let text = fs::read_to_string(&file).unwrap();
    let d = doc::open(Format::Json5, &text).unwrap_or_else(|e| panic!("{}", e.0));
    assert_eq!(d.get(&["gateway", "port"]), Some(json!(18800)));
    assert_eq!(d.get(&["models", "providers", "metaclaw"]), None);
    assert_eq!(
        d.get(&["agents", "defaults", "model", "primary"]),
        Some(json!("ollama/llama3.3"))
    );
    assert!(text.contains("port: 18800, // moved"));
    assert!(text.contains("        mode: \"non-main\", // never switch this off\n"));
    assert_eq!(
        text,
        fixture("openclaw/openclaw.json")
            .replace("port: 18789, // the default", "port: 18800, // moved")
    );
}

/// A CoPaw 1.0.x home as `copaw init` and a configured provider leave it: the default agent
/// has a model of its own, the QA agent follows the global active model.
fn copaw_home(home: &Path) -> Vec<(std::path::PathBuf, String)> {
    let ws = |id: &str| home.join(".copaw/workspaces").join(id);
    let config = json!({
        "agents": {
            "active_agent": "default",
            "profiles": {
                "default": {"id": "default", "workspace_dir": ws("default"), "enabled": true},
                "qa": {"id": "qa", "workspace_dir": ws("qa"), "enabled": true},
            },
        },
    });
    let files = vec![
        (
            home.join(".copaw/config.json"),
            serde_json::to_string_pretty(&config).unwrap(),
        ),
        (
            ws("default").join("agent.json"),
            "{\n  \"id\": \"default\",\n  \"name\": \"Default Agent\",\n  \"active_model\": {\n    \"provider_id\": \"openai\",\n    \"model\": \"gpt-4o\"\n  },\n  \"language\": \"en\"\n}".to_owned(),
        ),
        (
            ws("qa").join("agent.json"),
            "{\n  \"id\": \"qa\",\n  \"active_model\": null\n}".to_owned(),
        ),
        (
            home.join(".copaw.secret/providers/active_model.json"),
            fixture("copaw/active_model.json"),
        ),
        (
            home.join(".copaw.secret/providers/builtin/openai.json"),
            "{\n  \"id\": \"openai\",\n  \"base_url\": \"https://api.openai.com/v1\",\n  \"api_key\": \"ENC:gAAAAuser\"\n}".to_owned(),
        ),
    ];
    for (path, text) in &files {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    files
}

#[test]
fn copaw_is_registered_as_its_active_provider_and_reverted_exactly() {
    let home = tempfile::tempdir().unwrap();
    let backups = home.path().join(".metaclaw/agent-backup");
    let env = env(home.path());
    let a = by_name("copaw").unwrap();
    let originals = copaw_home(home.path());
    let provider = home
        .path()
        .join(".copaw.secret/providers/custom/metaclaw.json");
    let agent_json = |id: &str| {
        home.path()
            .join(".copaw/workspaces")
            .join(id)
            .join("agent.json")
    };
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
    };

    // Before: CoPaw resolves the default agent's own model, OpenAI's.
    let s = status(&*a, &env, &backups);
    assert_eq!(s.points_at.unwrap().base, "https://api.openai.com/v1");
    assert!(!s.connected && s.problem.is_none(), "{:?}", s.problem);

    let c = connect(&*a, &env, &target(), &backups).unwrap();
    assert!(c.changed && !c.created);
    assert_eq!(c.restart, Restart::NoCommand);
    let active = read(
        &home
            .path()
            .join(".copaw.secret/providers/active_model.json"),
    );
    assert_eq!(
        active,
        json!({"provider_id": "metaclaw", "model": "kimi-k2.5"})
    );
    let p = read(&provider);
    assert_eq!(p["base_url"], "http://127.0.0.1:30123/v1");
    assert_eq!(p["api_key"], "mc-proxy-key-7f3a");
    assert_eq!(
        read(&agent_json("default"))["active_model"],
        json!({"provider_id": "metaclaw", "model": "kimi-k2.5"})
    );
    // The agent without a model of its own is not touched.
    assert_eq!(
        fs::read_to_string(agent_json("qa")).unwrap(),
        originals[2].1
    );
    assert!(!connect(&*a, &env, &target(), &backups).unwrap().changed);

    let ep = endpoint(&*a, &env).unwrap().unwrap();
    assert_eq!(ep.base, "http://127.0.0.1:30123/v1");
    assert_eq!(ep.api_key, "mc-proxy-key-7f3a");
    assert_eq!(ep.model, "kimi-k2.5");
    assert!(status(&*a, &env, &backups).connected);

    // CoPaw encrypts the plaintext key the first time it loads the provider.
    let mut enc = p.clone();
    enc["api_key"] = json!("ENC:gAAAAABencrypted");
    fs::write(&provider, serde_json::to_string_pretty(&enc).unwrap()).unwrap();
    let err = endpoint(&*a, &env).unwrap_err().to_string();
    assert!(err.contains("encrypted"), "{err}");
    assert!(status(&*a, &env, &backups).connected);

    disconnect(&*a, &env, &backups).unwrap();
    for (path, text) in &originals {
        assert_eq!(
            &fs::read_to_string(path).unwrap(),
            text,
            "{}",
            path.display()
        );
    }
    assert!(!provider.exists());
    assert!(!status(&*a, &env, &backups).connected);
}

#[test]
fn copaw_files_are_created_and_removed_again() {
    let home = tempfile::tempdir().unwrap();
    let backups = home.path().join(".metaclaw/agent-backup");
    let env = env(home.path());
    let a = by_name("copaw").unwrap();
    let active = home
        .path()
        .join(".copaw.secret/providers/active_model.json");
    let provider = home
        .path()
        .join(".copaw.secret/providers/custom/metaclaw.json");

    let c = connect(&*a, &env, &target(), &backups).unwrap();
    assert!(c.created);
    assert!(active.exists() && provider.exists());
    assert_eq!(
        endpoint(&*a, &env).unwrap().unwrap().base,
        "http://127.0.0.1:30123/v1"
    );

    disconnect(&*a, &env, &backups).unwrap();
    assert!(!active.exists() && !provider.exists());
}

#[test]
fn picoclaw_and_nemoclaw_round_trip_through_the_driver() {
    for (name, rel, dest) in [
        ("picoclaw", "picoclaw/config.json", ".picoclaw/config.json"),
        ("nemoclaw", "nemoclaw/config.json", ".nemoclaw/config.json"),
    ] {
        let home = tempfile::tempdir().unwrap();
        let backups = home.path().join(".metaclaw/agent-backup");
        let env = env(home.path());
        let a = by_name(name).unwrap();
        let file = home.path().join(dest);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let original = fixture(rel);
        fs::write(&file, &original).unwrap();

        assert!(
            connect(&*a, &env, &target(), &backups).unwrap().changed,
            "{name}"
        );
        assert_ne!(fs::read_to_string(&file).unwrap(), original, "{name}");
        assert!(
            !connect(&*a, &env, &target(), &backups).unwrap().changed,
            "{name}"
        );
        disconnect(&*a, &env, &backups).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), original, "{name}");
    }
}
