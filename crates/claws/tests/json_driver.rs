//! The JSON adapters through the shared driver over a temp home: connect writes the file,
//! a second connect touches nothing, disconnect gives the original bytes back, and after a
//! user edit only MetaClaw's keys are reverted.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::time::Duration;

use metaclaw_claws::adapters::by_name;
use metaclaw_claws::driver::{connect, disconnect};
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

#[test]
fn copaw_config_is_created_and_removed_again() {
    let home = tempfile::tempdir().unwrap();
    let backups = home.path().join(".metaclaw/agent-backup");
    let env = env(home.path());
    let a = by_name("copaw").unwrap();
    let file = home.path().join(".copaw/config.json");

    let c = connect(&*a, &env, &target(), &backups).unwrap();
    assert!(c.created);
    let text = fs::read_to_string(&file).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["models"]["default"]["base_url"],
        json!("http://127.0.0.1:30123/v1")
    );

    disconnect(&*a, &env, &backups).unwrap();
    assert!(!file.exists());
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
