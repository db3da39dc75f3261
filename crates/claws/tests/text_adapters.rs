//! The TOML, YAML and `.env` adapters (zeroclaw, hermes, ironclaw, nanoclaw, none) over
//! realistic configs: MetaClaw's keys land where the agent reads them, everything else
//! (settings, comments, layout) survives, a second connect changes nothing, and broken
//! files are refused with a message saying where.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use metaclaw_claws::adapters::by_name;
use metaclaw_claws::{
    Adapter, ClawError, Doc, Endpoint, Env, Format, Protocol, SystemRunner, Target, doc,
};
use serde_json::{Value, json};

fn fixture(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn target() -> Target {
    Target::local(30000, "mc-proxy-key", "metaclaw-model")
}

fn adapter(name: &str) -> Box<dyn Adapter> {
    by_name(name).unwrap()
}

/// Applies the adapter's edits to `text` as the driver would and renders the result.
fn connect(a: &dyn Adapter, text: &str, t: &Target) -> String {
    let mut d = doc::open(a.format(), text).unwrap();
    let edits = a.edits(&*d, t).unwrap();
    for e in edits {
        let path: Vec<&str> = e.path.iter().map(String::as_str).collect();
        match e.value {
            Some(v) => d.set(&path, &v).unwrap(),
            None => {
                d.remove(&path).unwrap();
            }
        }
    }
    d.render()
}

fn reopen(a: &dyn Adapter, text: &str) -> Box<dyn Doc> {
    doc::open(a.format(), text).unwrap()
}

fn openai(base: &str, key: &str, model: &str) -> Endpoint {
    Endpoint {
        protocol: Protocol::OpenAi,
        base: base.into(),
        api_key: key.into(),
        model: model.into(),
    }
}

/// Every line of `original` not mentioning one of `changed` keys is still in `out`, in
/// the same order.
fn keeps_other_lines(original: &str, out: &str, changed: &[&str]) {
    let mut rest = out;
    for line in original.lines() {
        if changed.iter().any(|k| line.contains(k)) {
            continue;
        }
        match rest.find(line) {
            Some(i) => rest = &rest[i + line.len()..],
            None => panic!("line {line:?} lost or moved:\n{out}"),
        }
    }
}

fn env_with(home: &Path, vars: &[(&str, &str)]) -> Env {
    Env {
        home: home.to_path_buf(),
        path: Vec::new(),
        vars: vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<HashMap<_, _>>(),
        runner: Box::new(SystemRunner),
    }
}

// ---- zeroclaw ----

#[test]
fn zeroclaw_selects_a_custom_provider_at_the_top_level() {
    let a = adapter("zeroclaw");
    assert_eq!(a.format(), Format::Toml);
    assert_eq!(a.binary(), Some("zeroclaw"));
    let original = fixture("zeroclaw/config.toml");
    let out = connect(&*a, &original, &target());

    let d = reopen(&*a, &out);
    assert_eq!(
        d.get(&["default_provider"]),
        Some(json!("custom:http://127.0.0.1:30000/v1"))
    );
    assert_eq!(d.get(&["default_model"]), Some(json!("metaclaw-model")));
    assert_eq!(d.get(&["api_key"]), Some(json!("mc-proxy-key")));
    // Neither the alias nor the Python version's ignored keys are added.
    for absent in ["model", "model_provider", "provider", "base_url"] {
        assert_eq!(d.get(&[absent]), None, "{absent}");
    }
    // The old line patcher rewrote these, or appended into the last table.
    assert_eq!(
        d.get(&["providers", "ollama"]),
        Some(json!({"model": "llama3.2", "base_url": "http://localhost:11434/v1"}))
    );
    assert_eq!(
        d.get(&["channels_config", "telegram"]),
        Some(json!({"bot_token": "123456:telegram-token", "allowed_users": ["alice"]}))
    );
    // Values change in place, comments kept; everything else is as it was.
    assert!(
        out.contains("api_key = \"mc-proxy-key\"   # OpenRouter\n"),
        "{out}"
    );
    assert!(out.contains("default_provider = \"custom:http://127.0.0.1:30000/v1\"\ndefault_model = \"metaclaw-model\"\n"), "{out}");
    keeps_other_lines(
        &original,
        &out,
        &["api_key = \"sk-or", "default_provider", "default_model"],
    );

    assert_eq!(
        a.read_back(&*d),
        Some(openai(
            "http://127.0.0.1:30000/v1",
            "mc-proxy-key",
            "metaclaw-model"
        ))
    );
    assert_eq!(a.read_back(&*reopen(&*a, &original)), None);
    assert_eq!(
        connect(&*a, &out, &target()),
        out,
        "second connect changed the file"
    );
}

#[test]
fn zeroclaw_keeps_to_the_alias_a_config_uses() {
    let a = adapter("zeroclaw");
    let original = "# hand-written\nmodel_provider = \"ollama\"\nmodel = \"llama3.2\"\n\n[gateway]\nport = 3000\n";
    let out = connect(&*a, original, &target());
    assert_eq!(
        out,
        "# hand-written\nmodel_provider = \"custom:http://127.0.0.1:30000/v1\"\nmodel = \"metaclaw-model\"\napi_key = \"mc-proxy-key\"\n\n[gateway]\nport = 3000\n"
    );
    assert_eq!(
        a.read_back(&*reopen(&*a, &out)),
        Some(openai(
            "http://127.0.0.1:30000/v1",
            "mc-proxy-key",
            "metaclaw-model"
        ))
    );
    assert_eq!(connect(&*a, &out, &target()), out);
}

#[test]
fn zeroclaw_paths_restart_and_errors() {
    let a = adapter("zeroclaw");
    let home = tempfile::tempdir().unwrap();
    let env = env_with(home.path(), &[]);
    assert_eq!(
        a.config_file(&env).unwrap(),
        Some(home.path().join(".zeroclaw/config.toml"))
    );
    assert_eq!(
        a.restart_command(&env),
        Some(vec!["zeroclaw".into(), "service".into(), "restart".into()])
    );
    let err = doc::open(Format::Toml, "api_key = \"x\"\n[gateway\nport = 1\n")
        .err()
        .unwrap();
    assert!(err.0.contains("line 2"), "{}", err.0);
    // An empty file opens (the driver refuses it as empty); nothing reads back.
    assert_eq!(a.read_back(&*reopen(&*a, "")), None);
    assert_eq!(
        connect(&*a, "", &target()),
        "default_provider = \"custom:http://127.0.0.1:30000/v1\"\ndefault_model = \"metaclaw-model\"\napi_key = \"mc-proxy-key\"\n"
    );
    assert!(a.notes().join(" ").contains("ZEROCLAW_PROVIDER"));
}

// ---- hermes ----

#[test]
fn hermes_upserts_its_provider_and_selects_it() {
    let a = adapter("hermes");
    assert_eq!(a.format(), Format::Yaml);
    let original = fixture("hermes/config.yaml");
    let out = connect(&*a, &original, &target());

    let d = reopen(&*a, &out);
    assert_eq!(
        d.get(&["model", "provider"]),
        Some(json!("custom:metaclaw"))
    );
    assert_eq!(d.get(&["model", "default"]), Some(json!("metaclaw-model")));
    let providers = d.get(&["custom_providers"]).unwrap();
    let providers = providers.as_array().unwrap();
    assert_eq!(providers.len(), 2);
    assert_eq!(providers[0]["name"], json!("local-llama"));
    assert_eq!(
        providers[1],
        json!({
            "name": "metaclaw",
            "base_url": "http://127.0.0.1:30000/v1",
            "api_key": "mc-proxy-key",
            "models": {"metaclaw-model": {"context_length": 200000}},
        })
    );
    // The old endpoint goes, as `hermes model` drops it, so Hermes' probes follow.
    assert_eq!(d.get(&["model", "base_url"]), None);
    // Comments, the other provider and unrelated settings are untouched.
    keeps_other_lines(
        &original,
        &out,
        &[
            "default: anthropic",
            "provider: openrouter",
            "base_url: https://openrouter.ai",
        ],
    );
    assert!(
        out.contains("  default: metaclaw-model   # picked in `hermes model`\n"),
        "{out}"
    );
    assert_eq!(
        d.get(&["toolsets"]),
        Some(json!(["web", "terminal", "file"]))
    );
    assert_eq!(d.get(&["compression", "threshold"]), Some(json!(0.85)));

    assert_eq!(
        a.read_back(&*d),
        Some(openai(
            "http://127.0.0.1:30000/v1",
            "mc-proxy-key",
            "metaclaw-model"
        ))
    );
    assert_eq!(a.read_back(&*reopen(&*a, &original)), None);
    assert_eq!(
        connect(&*a, &out, &target()),
        out,
        "second connect changed the file"
    );
}

#[test]
fn hermes_replaces_a_string_model_and_updates_a_stale_entry() {
    let a = adapter("hermes");
    let original = fixture("hermes/string_model.yaml");
    let out = connect(&*a, &original, &target());
    let d = reopen(&*a, &out);
    assert_eq!(
        d.get(&["model"]),
        Some(json!({"default": "metaclaw-model", "provider": "custom:metaclaw"}))
    );
    let providers = d.get(&["custom_providers"]).unwrap();
    assert_eq!(providers.as_array().unwrap().len(), 1);
    assert_eq!(providers[0]["base_url"], json!("http://127.0.0.1:30000/v1"));
    assert_eq!(
        providers[0]["models"],
        json!({"metaclaw-model": {"context_length": 200000}})
    );
    // A setting the user added to MetaClaw's entry stays, comment and all.
    assert!(
        out.contains("    request_timeout: 300   # user-added, kept\n"),
        "{out}"
    );
    assert!(out.contains("  # A stale MetaClaw entry from an earlier install, on another port.\n"));
    assert!(out.contains("memory:\n  memory_enabled: true\n  user_profile_enabled: true\n"));
    assert_eq!(
        a.read_back(&*d),
        Some(openai(
            "http://127.0.0.1:30000/v1",
            "mc-proxy-key",
            "metaclaw-model"
        ))
    );
    assert_eq!(connect(&*a, &out, &target()), out);
}

#[test]
fn hermes_fills_an_empty_config_and_refuses_broken_ones() {
    let a = adapter("hermes");
    let out = connect(&*a, "# nothing yet\n", &target());
    assert!(out.starts_with("# nothing yet\n"), "{out}");
    assert_eq!(
        a.read_back(&*reopen(&*a, &out)),
        Some(openai(
            "http://127.0.0.1:30000/v1",
            "mc-proxy-key",
            "metaclaw-model"
        ))
    );

    let err = doc::open(Format::Yaml, "model:\n  default: x\n provider: [oops\n")
        .err()
        .unwrap();
    assert!(err.0.contains("line"), "{}", err.0);
    let bad_list = reopen(&*a, "custom_providers: not-a-list\n");
    assert!(a.edits(&*bad_list, &target()).is_err());
    let bad_model = reopen(&*a, "model: [1, 2]\n");
    assert!(a.edits(&*bad_model, &target()).is_err());
}

#[test]
fn hermes_follows_hermes_home() {
    let a = adapter("hermes");
    let home = tempfile::tempdir().unwrap();
    let env = env_with(home.path(), &[]);
    assert_eq!(
        a.config_file(&env).unwrap(),
        Some(home.path().join(".hermes/config.yaml"))
    );
    let env = env_with(home.path(), &[("HERMES_HOME", "/srv/hermes")]);
    assert_eq!(
        a.config_file(&env).unwrap(),
        Some(PathBuf::from("/srv/hermes/config.yaml"))
    );
    assert_eq!(a.binary(), Some("hermes"));
    // No gateway service installed: `hermes gateway restart` would run one in the
    // foreground, so there is nothing to run.
    assert_eq!(a.restart_command(&env), None);
}

// ---- ironclaw ----

#[test]
fn ironclaw_rewrites_its_llm_lines_in_place() {
    let a = adapter("ironclaw");
    assert_eq!(a.format(), Format::Dotenv);
    let original = fixture("ironclaw/dot.env");
    let out = connect(&*a, &original, &target());

    // Existing keys change where they are (prefix and comment kept); new ones are appended.
    let want = original
        .replace(
            "LLM_BACKEND=nearai   #",
            "LLM_BACKEND=openai_compatible   #",
        )
        .replace(
            "export LLM_MODEL=gpt-4o-mini",
            "export LLM_MODEL=metaclaw-model",
        )
        + "LLM_BASE_URL=http://127.0.0.1:30000/v1\nLLM_API_KEY=mc-proxy-key\n";
    assert_eq!(out, want);

    let d = reopen(&*a, &out);
    assert_eq!(
        a.read_back(&*d),
        Some(openai(
            "http://127.0.0.1:30000/v1",
            "mc-proxy-key",
            "metaclaw-model"
        ))
    );
    assert_eq!(d.get(&["AGENT_NAME"]), Some(json!("Iron Claw")));
    assert_eq!(a.read_back(&*reopen(&*a, &original)), None);
    assert_eq!(connect(&*a, &out, &target()), out);

    let home = tempfile::tempdir().unwrap();
    let env = env_with(home.path(), &[]);
    assert_eq!(
        a.config_file(&env).unwrap(),
        Some(home.path().join(".ironclaw/.env"))
    );
    // IronClaw's own base-dir override (`IRONCLAW_BASE_DIR`, src/bootstrap.rs).
    let moved = env_with(home.path(), &[("IRONCLAW_BASE_DIR", "/srv/ironclaw")]);
    assert_eq!(
        a.config_file(&moved).unwrap(),
        Some(std::path::PathBuf::from("/srv/ironclaw/.env"))
    );
    assert!(
        a.notes()
            .iter()
            .any(|n| n.contains("config reset llm_backend"))
    );
    assert_eq!(a.binary(), Some("ironclaw"));
    assert_eq!(
        a.restart_command(&env),
        Some(vec!["ironclaw".into(), "service".into(), "restart".into()])
    );
}

#[test]
fn ironclaw_refuses_a_corrupt_env() {
    let err = doc::open(Format::Dotenv, "LLM_BACKEND=nearai\n<<<<<<< HEAD\n")
        .err()
        .unwrap();
    assert!(err.0.contains("line 2"), "{}", err.0);
    let err = doc::open(Format::Dotenv, "A=1\nLLM_API_KEY=\"unterminated\n")
        .err()
        .unwrap();
    assert!(err.0.contains("LLM_API_KEY"), "{}", err.0);
    // The key never shows up in an error.
    assert!(!err.0.contains("unterminated"), "{}", err.0);
}

// ---- nanoclaw ----

#[test]
fn nanoclaw_points_its_env_at_the_anthropic_base() {
    let a = adapter("nanoclaw");
    assert_eq!(a.protocol(), Protocol::Anthropic);
    assert_eq!(a.format(), Format::Dotenv);
    let original = fixture("nanoclaw/dot.env");
    assert!(!original.ends_with('\n'));
    let out = connect(&*a, &original, &target());
    assert_eq!(
        out,
        original.replace(
            "ANTHROPIC_BASE_URL=https://api.anthropic.com",
            "ANTHROPIC_BASE_URL=http://127.0.0.1:30000"
        ) + "\nANTHROPIC_API_KEY=mc-proxy-key\n"
    );
    let d = reopen(&*a, &out);
    assert_eq!(
        a.read_back(&*d),
        Some(Endpoint {
            protocol: Protocol::Anthropic,
            base: "http://127.0.0.1:30000".into(),
            api_key: "mc-proxy-key".into(),
            model: String::new(),
        })
    );
    assert_eq!(connect(&*a, &out, &target()), out);
}

#[test]
fn nanoclaw_finds_its_checkout() {
    let a = adapter("nanoclaw");
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let env = env_with(h, &[]);

    match a.config_file(&env) {
        Err(ClawError::NotFound { agent, hint }) => {
            assert_eq!(agent, "nanoclaw");
            assert!(hint.contains("ANTHROPIC_BASE_URL"), "{hint}");
        }
        other => panic!("expected NotFound, got {other:?}"),
    }

    // Fallback checkouts, first existing wins.
    fs::create_dir_all(h.join(".nanoclaw")).unwrap();
    assert_eq!(a.config_file(&env).unwrap(), Some(h.join(".nanoclaw/.env")));
    fs::create_dir_all(h.join("code/nanoclaw")).unwrap();
    assert_eq!(
        a.config_file(&env).unwrap(),
        Some(h.join("code/nanoclaw/.env"))
    );
    fs::create_dir_all(h.join("nanoclaw")).unwrap();
    assert_eq!(a.config_file(&env).unwrap(), Some(h.join("nanoclaw/.env")));

    // The service's working directory beats the guesses.
    let write = |rel: &str, fixture_name: &str| {
        let p = h.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, fixture(fixture_name)).unwrap();
    };
    write(
        "Library/LaunchAgents/com.nanoclaw.plist",
        "nanoclaw/com.nanoclaw.plist",
    );
    assert_eq!(
        a.config_file(&env).unwrap(),
        Some(h.join("Projects/nanoclaw/.env"))
    );
    write(
        ".config/systemd/user/nanoclaw.service",
        "nanoclaw/nanoclaw.service",
    );
    let want = if cfg!(target_os = "macos") {
        h.join("Projects/nanoclaw/.env")
    } else {
        h.join("src/nanoclaw/.env")
    };
    assert_eq!(a.config_file(&env).unwrap(), Some(want));

    let restart = a.restart_command(&env).unwrap();
    if cfg!(target_os = "macos") {
        assert_eq!(restart[0], "launchctl");
        assert!(restart[3].starts_with("gui/") && restart[3].ends_with("/com.nanoclaw"));
    } else {
        assert_eq!(restart, ["systemctl", "--user", "restart", "nanoclaw"]);
    }
    assert_eq!(a.binary(), None);
}

// ---- none ----

#[test]
fn none_edits_nothing_and_explains_the_wiring() {
    let a = adapter("none");
    let home = tempfile::tempdir().unwrap();
    let env = env_with(home.path(), &[]);
    assert_eq!(a.config_file(&env).unwrap(), None);
    assert_eq!(a.binary(), None);
    assert_eq!(a.restart_command(&env), None);
    let empty = doc::open(Format::Dotenv, "").unwrap();
    assert!(a.edits(&*empty, &target()).unwrap().is_empty());
    let notes = a.notes().join("\n");
    assert!(notes.contains("/v1"), "{notes}");
    assert!(notes.contains("ANTHROPIC_BASE_URL"), "{notes}");
    assert!(
        notes.contains("metaclaw config set proxy.api_key"),
        "{notes}"
    );
    assert!(!notes.contains("mc-proxy-key"));
}

// ---- all of them: the proxy key stays out of Debug output ----

#[test]
fn read_back_debug_hides_the_key() {
    for name in ["zeroclaw", "hermes", "ironclaw", "nanoclaw"] {
        let a = adapter(name);
        let out = connect(&*a, "", &target());
        let endpoint = a.read_back(&*reopen(&*a, &out)).unwrap();
        let shown = format!("{endpoint:?}");
        assert!(!shown.contains("mc-proxy-key"), "{name}: {shown}");
        assert_eq!(endpoint.api_key, "mc-proxy-key");
        let _: Value = json!(endpoint.base);
    }
}
