//! OpenClaw 2026.9 as it reads its config (checked against the real agent by
//! tests/python/test_real_agents_connect.py): agents that pin their own model are pointed
//! at MetaClaw too and reported until they are, the config is found where OpenClaw finds
//! it, and the gateway is restarted only when it would not reload by itself and runs as a
//! service.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::time::Duration;

use metaclaw_claws::adapters::by_name;
use metaclaw_claws::driver::{Restart, connect, disconnect, endpoint, status};
use metaclaw_claws::{CommandOutput, Env, Runner, Target};
use serde_json::json;

struct NoRunner;

impl Runner for NoRunner {
    fn run(&self, argv: &[String], _timeout: Duration) -> std::io::Result<CommandOutput> {
        Err(std::io::Error::other(format!("ran {argv:?}")))
    }
}

fn env(home: &Path, vars: &[(&str, &str)]) -> Env {
    Env {
        home: home.to_path_buf(),
        path: Vec::new(),
        vars: vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        runner: Box::new(NoRunner),
    }
}

fn onboarded() -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openclaw/onboarded.json"),
    )
    .unwrap()
}

fn target() -> Target {
    Target::local(30123, "mc-proxy-key-7f3a0123", "fake-model")
}

fn json_of(path: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn agents_with_their_own_model_go_through_metaclaw_too() {
    let home = tempfile::tempdir().unwrap();
    let env = env(home.path(), &[]);
    let backups = home.path().join("backups");
    let a = by_name("openclaw").unwrap();
    let file = home.path().join(".openclaw/openclaw.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, onboarded()).unwrap();

    // Before: `coder` talks to another provider than the defaults, and that is what shows.
    let before = endpoint(&*a, &env).unwrap().unwrap();
    assert_eq!(before.base, "https://llm.example/v1");

    let c = connect(&*a, &env, &target(), &backups).unwrap();
    assert!(c.changed);
    // Nothing runs: no gateway service, and the gateway would reload by itself anyway.
    assert_eq!(c.restart, Restart::NoCommand);
    let cfg = json_of(&file);
    let agents = &cfg["agents"];
    assert_eq!(
        agents["defaults"]["model"]["primary"],
        "metaclaw/fake-model"
    );
    assert_eq!(
        agents["entries"]["coder"]["model"],
        json!({"primary": "metaclaw/fake-model", "fallbacks": ["custom-127-0-0-1-8000/fake-model"]})
    );
    assert_eq!(
        agents["entries"]["coder"]["models"],
        json!({"other/big-model": {}, "metaclaw/fake-model": {}})
    );
    // The shorthand stays a shorthand; an agent without its own model is left alone.
    assert_eq!(agents["entries"]["writer"]["model"], "metaclaw/fake-model");
    assert_eq!(agents["entries"]["main"].get("model"), None);
    assert!(status(&*a, &env, &backups).connected);

    // The user pins one agent back to its old provider: not connected any more.
    let mut edited = cfg.clone();
    edited["agents"]["entries"]["coder"]["model"]["primary"] = json!("other/big-model");
    fs::write(&file, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    assert!(!status(&*a, &env, &backups).connected);
    fs::write(&file, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();

    disconnect(&*a, &env, &backups).unwrap();
    let back = json_of(&file);
    assert_eq!(
        back,
        serde_json::from_str::<serde_json::Value>(&onboarded()).unwrap()
    );
}

#[test]
fn the_config_is_the_one_openclaw_reads() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("oc-state");
    fs::create_dir_all(&state).unwrap();
    fs::write(state.join("openclaw.json"), onboarded()).unwrap();
    // A stale default config that OpenClaw ignores while OPENCLAW_STATE_DIR is set.
    let ignored = home.path().join(".openclaw/openclaw.json");
    fs::create_dir_all(ignored.parent().unwrap()).unwrap();
    fs::write(&ignored, onboarded()).unwrap();
    let env = env(home.path(), &[("OPENCLAW_STATE_DIR", "~/oc-state")]);
    let a = by_name("openclaw").unwrap();

    let c = connect(&*a, &env, &target(), &home.path().join("backups")).unwrap();
    assert_eq!(
        c.file.as_deref(),
        Some(state.join("openclaw.json").as_path())
    );
    assert_eq!(
        json_of(&state.join("openclaw.json"))["agents"]["defaults"]["model"]["primary"],
        "metaclaw/fake-model"
    );
    assert_eq!(fs::read_to_string(&ignored).unwrap(), onboarded());
}

#[test]
fn the_gateway_is_restarted_only_without_hot_reload_and_as_a_service() {
    let home = tempfile::tempdir().unwrap();
    let a = by_name("openclaw").unwrap();
    let file = home.path().join(".openclaw/openclaw.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let restart = || a.restart_command(&env(home.path(), &[]));

    // Hot reload (the default) applies `models` and `agents`: nothing to restart.
    fs::write(&file, onboarded()).unwrap();
    assert_eq!(restart(), None);
    let unit = home
        .path()
        .join(".config/systemd/user/openclaw-gateway.service");
    fs::create_dir_all(unit.parent().unwrap()).unwrap();
    fs::write(&unit, "[Service]\n").unwrap();
    assert_eq!(restart(), None);

    // Hot reload off: the service is restarted; without one nothing is, and the notes say
    // what to do.
    let off = onboarded().replace(
        "\"mode\": \"local\",",
        "\"mode\": \"local\",\n    \"reload\": { \"mode\": \"off\" },",
    );
    fs::write(&file, off).unwrap();
    assert_eq!(
        restart().map(|v| v.join(" ")).as_deref(),
        Some("openclaw gateway restart")
    );
    fs::remove_file(&unit).unwrap();
    assert_eq!(restart(), None);
    assert!(a.notes().iter().any(|n| n.contains("gateway.reload.mode")));
}
