//! Claude Code in plugin mode through the shared driver over a temp home: refused without the
//! plugin's command; `settings.json` created when missing and removed again; an existing one
//! keeps the user's settings and comes back byte for byte; status says plugin and connected
//! only while MetaClaw's hooks are in the file; no key is ever written.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use metaclaw_claws::adapters::by_name;
use metaclaw_claws::driver::{Reverted, connect, disconnect, preview, status};
use metaclaw_claws::{ClawError, CommandOutput, Env, Mode, PluginHost, Runner, Target};
use serde_json::Value;

const KEY: &str = "mc-proxy-key-claude-7f3a";

struct NoRunner;

impl Runner for NoRunner {
    fn run(&self, _argv: &[String], _timeout: Duration) -> std::io::Result<CommandOutput> {
        Err(std::io::Error::other("no agent binaries in tests"))
    }
}

fn env(home: &Path) -> Env {
    Env {
        home: home.to_path_buf(),
        path: Vec::new(),
        vars: Default::default(),
        runner: Box::new(NoRunner),
    }
}

fn target() -> Target {
    Target {
        plugin: Some(PluginHost {
            program: PathBuf::from("/opt/metaclaw/bin/metaclaw"),
            home: None,
            metaclaw_home: PathBuf::from("/home/u/.metaclaw"),
        }),
        ..Target::local(30123, KEY, "m")
    }
}

#[test]
fn without_the_plugins_command_nothing_is_written() {
    let home = tempfile::tempdir().unwrap();
    let a = by_name("claude-code").unwrap();
    let plain = Target::local(30123, KEY, "m");
    let backups = home.path().join(".metaclaw/agent-backup");
    match connect(&*a, &env(home.path()), &plain, &backups) {
        Err(ClawError::PluginOnly { agent }) => assert_eq!(agent, "claude-code"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(!home.path().join(".claude").exists());
    assert!(!backups.exists());
}

#[test]
fn a_missing_settings_file_is_created_and_removed_again() {
    let home = tempfile::tempdir().unwrap();
    let e = env(home.path());
    let a = by_name("claude-code").unwrap();
    let backups = home.path().join(".metaclaw/agent-backup");
    let file = home.path().join(".claude/settings.json");

    let p = preview(&*a, &e, &target()).unwrap();
    assert!(p.creates && !p.already_connected, "{p:?}");
    assert!(!file.exists());

    let c = connect(&*a, &e, &target(), &backups).unwrap();
    assert!(c.created && c.changed);
    let written: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written["hooks"]["SessionEnd"][0]["hooks"][0]["command"],
        "/opt/metaclaw/bin/metaclaw hook claude-code"
    );
    let s = status(&*a, &e, &backups);
    assert_eq!(s.mode, Mode::Plugin);
    assert!(s.connected && s.points_at.is_none(), "{s:?}");

    let d = disconnect(&*a, &e, &backups).unwrap();
    assert_eq!(d.files[0].action, Reverted::Deleted);
    assert!(!file.exists());
    assert!(!status(&*a, &e, &backups).connected);
}

#[test]
fn the_users_settings_stay_and_come_back_byte_for_byte() {
    let home = tempfile::tempdir().unwrap();
    let e = env(home.path());
    let a = by_name("claude-code").unwrap();
    let backups = home.path().join(".metaclaw/agent-backup");
    let file = home.path().join(".claude/settings.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let original = "{\n  \"model\": \"opus\",\n  \"env\": {\"FOO\": \"bar\"},\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]\n  }\n}\n";
    fs::write(&file, original).unwrap();

    connect(&*a, &e, &target(), &backups).unwrap();
    let text = fs::read_to_string(&file).unwrap();
    assert!(!text.contains(KEY) && !text.contains("ANTHROPIC"), "{text}");
    let written: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(written["model"], "opus");
    assert_eq!(written["env"]["FOO"], "bar");
    let stop = written["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2, "{stop:?}");
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
    assert!(!connect(&*a, &e, &target(), &backups).unwrap().changed);

    // The user takes MetaClaw's hooks out by hand: no longer connected, said in words.
    let mut edited = written.clone();
    edited["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("UserPromptSubmit");
    fs::write(&file, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    let s = status(&*a, &e, &backups);
    assert!(!s.connected && s.backed_up, "{s:?}");
    assert!(s.problem.unwrap().contains("plugin entries"));
    fs::write(&file, &text).unwrap();

    let d = disconnect(&*a, &e, &backups).unwrap();
    assert_eq!(d.files[0].action, Reverted::Restored);
    assert_eq!(fs::read_to_string(&file).unwrap(), original);
}
