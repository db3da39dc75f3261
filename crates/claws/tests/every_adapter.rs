//! Every adapter, one after another, on its realistic fixture in a temp home: preview writes
//! nothing; connect changes the file; a second connect changes nothing; the request the
//! agent's own config would make reaches a local server speaking the agent's protocol with
//! MetaClaw's key; disconnect gives the original bytes back and drops the backup.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use metaclaw_claws::adapters::by_name;
use metaclaw_claws::driver::{self, Reverted};
use metaclaw_claws::verify::verify_agent;
use metaclaw_claws::{CommandOutput, Env, Protocol, Runner, Target};
use serde_json::{Value, json};

const KEY: &str = "mc-every-adapter-key-0123456789";

struct NoRunner;

impl Runner for NoRunner {
    fn run(&self, _argv: &[String], _timeout: Duration) -> std::io::Result<CommandOutput> {
        Err(std::io::Error::other("no agent binaries in tests"))
    }
}

/// (agent, fixture, where the agent keeps it under the home).
const CASES: &[(&str, &str, &str)] = &[
    (
        "openclaw",
        "openclaw/openclaw.json",
        ".openclaw/openclaw.json",
    ),
    (
        "copaw",
        "copaw/active_model.json",
        ".copaw.secret/providers/active_model.json",
    ),
    ("ironclaw", "ironclaw/dot.env", ".ironclaw/.env"),
    ("picoclaw", "picoclaw/config.json", ".picoclaw/config.json"),
    ("zeroclaw", "zeroclaw/config.toml", ".zeroclaw/config.toml"),
    ("nanoclaw", "nanoclaw/dot.env", "nanoclaw/.env"),
    ("nemoclaw", "nemoclaw/config.json", ".nemoclaw/config.json"),
    ("hermes", "hermes/config.yaml", ".hermes/config.yaml"),
];

/// Answers like a provider when the key is MetaClaw's, refuses otherwise.
async fn openai(headers: HeaderMap, body: String) -> (StatusCode, String) {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
    if auth != Some(&format!("Bearer {KEY}")) {
        return (StatusCode::UNAUTHORIZED, "{}".into());
    }
    let v: Value = serde_json::from_str(&body).unwrap_or_default();
    (
        StatusCode::OK,
        json!({"model": v["model"], "choices": []}).to_string(),
    )
}

async fn anthropic(headers: HeaderMap, body: String) -> (StatusCode, String) {
    let key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
    if key != Some(KEY) {
        return (StatusCode::UNAUTHORIZED, "{}".into());
    }
    let v: Value = serde_json::from_str(&body).unwrap_or_default();
    (
        StatusCode::OK,
        json!({"model": v["model"], "content": []}).to_string(),
    )
}

async fn serve() -> u16 {
    let app = Router::new()
        .route("/v1/chat/completions", post(openai))
        .route("/v1/messages", post(anthropic));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

fn fixture(rel: &str) -> Vec<u8> {
    fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel),
    )
    .unwrap()
}

#[tokio::test]
async fn every_adapter_applies_verifies_and_reverts_byte_for_byte() {
    let port = serve().await;
    let target = Target::local(port, KEY, "served-model");
    for (name, fixture_path, rel) in CASES {
        let home = tempfile::tempdir().unwrap();
        let env = Env {
            home: home.path().to_path_buf(),
            path: Vec::new(),
            vars: Default::default(),
            runner: Box::new(NoRunner),
        };
        let backups = home.path().join(".metaclaw/agent-backup");
        let file = home.path().join(rel);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let original = fixture(fixture_path);
        fs::write(&file, &original).unwrap();
        let a = by_name(name).unwrap();

        let p = driver::preview(&*a, &env, &target).unwrap();
        assert!(
            !p.changes.is_empty() && !p.already_connected,
            "{name}: {p:?}"
        );
        assert_eq!(fs::read(&file).unwrap(), original, "{name}: preview wrote");

        let c = driver::connect(&*a, &env, &target, &backups).unwrap();
        assert!(c.changed, "{name}");
        let written = fs::read(&file).unwrap();
        assert_ne!(written, original, "{name}");
        let again = driver::connect(&*a, &env, &target, &backups).unwrap();
        assert!(
            !again.changed,
            "{name}: second connect changed {:?}",
            again.changes
        );
        assert_eq!(fs::read(&file).unwrap(), written, "{name}");
        let s = driver::status(&*a, &env, &backups);
        assert!(s.connected && s.backed_up, "{name}: {s:?}");

        let mut endpoint = driver::endpoint(&*a, &env).unwrap().unwrap();
        assert_eq!(endpoint.base, target.base(a.protocol()), "{name}");
        if *name == "nemoclaw" {
            // NemoClaw's key lives in OpenShell, not in its file (the notes give the step).
            assert!(endpoint.api_key.is_empty());
            endpoint.api_key = KEY.into();
        }
        let v = verify_agent(name, &endpoint, Duration::from_secs(10))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(v.status, 200, "{name}");
        assert_eq!(
            v.url.ends_with("/v1/messages"),
            a.protocol() == Protocol::Anthropic,
            "{name}: {}",
            v.url
        );

        let d = driver::disconnect(&*a, &env, &backups).unwrap();
        assert!(d.changed, "{name}");
        // The main file comes back; files MetaClaw added beside it (CoPaw's provider) go.
        assert!(
            d.files.iter().all(|f| f.action == Reverted::Restored
                || f.path != file && f.action == Reverted::Deleted),
            "{name}: {:?}",
            d.files
        );
        assert!(
            d.files
                .iter()
                .filter(|f| f.action == Reverted::Deleted)
                .all(|f| !f.path.exists()),
            "{name}: {:?}",
            d.files
        );
        assert_eq!(
            fs::read(&file).unwrap(),
            original,
            "{name}: not byte-identical"
        );
        assert!(!backups.join(name).exists(), "{name}: backup left behind");
        let s = driver::status(&*a, &env, &backups);
        assert!(!s.connected && !s.backed_up, "{name}: {s:?}");
    }
}
