//! The JSON-family adapters (openclaw, copaw, picoclaw, nemoclaw) against realistic config
//! files: MetaClaw's keys land, everything else (values, comments, layout) stays, the file
//! reads back as the target, a second connect changes nothing, and putting the old values
//! back gives the original bytes.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use metaclaw_claws::adapters::by_name;
use metaclaw_claws::doc::{self, EditError};
use metaclaw_claws::{
    Adapter, CommandOutput, Doc, Edit, Endpoint, Env, Format, Protocol, Runner, Target,
};
use serde_json::{Value, json};

fn fixture(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn target() -> Target {
    Target::local(30123, "mc-proxy-key-7f3a", "kimi-k2.5")
}

fn adapter(name: &str) -> Box<dyn Adapter> {
    by_name(name).unwrap_or_else(|| panic!("no adapter {name}"))
}

fn open(text: &str) -> Box<dyn Doc> {
    match doc::open(Format::Json5, text) {
        Ok(d) => d,
        Err(e) => panic!("does not open: {}", e.0),
    }
}

fn apply(doc: &mut dyn Doc, edits: &[Edit]) -> Result<(), EditError> {
    for e in edits {
        let path: Vec<&str> = e.path.iter().map(String::as_str).collect();
        match &e.value {
            Some(v) => doc.set(&path, v)?,
            None => {
                doc.remove(&path)?;
            }
        }
    }
    Ok(())
}

/// Connects `text` to the target: the rendered result and the edits used.
fn connect(a: &dyn Adapter, text: &str) -> (String, Vec<Edit>) {
    let before = open(text);
    let edits = a.edits(&*before, &target()).unwrap();
    let mut after = open(text);
    apply(&mut *after, &edits).unwrap();
    (after.render(), edits)
}

fn wanted() -> Endpoint {
    let t = target();
    Endpoint {
        protocol: Protocol::OpenAi,
        base: t.openai_base,
        api_key: t.api_key,
        model: t.model,
    }
}

/// Every leaf of `before` not under an edited path is unchanged in `after`.
fn assert_rest_unchanged(before: &Value, after: &Value, edits: &[Edit], at: &mut Vec<String>) {
    if edits.iter().any(|e| e.path == *at) {
        return;
    }
    match before {
        Value::Object(map) => {
            for (k, v) in map {
                at.push(k.clone());
                let there = after
                    .get(k)
                    .unwrap_or_else(|| panic!("lost {}", at.join(".")));
                assert_rest_unchanged(v, there, edits, at);
                at.pop();
            }
        }
        _ => assert_eq!(before, after, "{} changed", at.join(".")),
    }
}

/// Comment lines (and any line with a comment) survive verbatim.
fn assert_comments_kept(before: &str, after: &str) {
    for line in before
        .lines()
        .filter(|l| l.contains("//") || l.contains("/*"))
    {
        // URLs contain `//` too; they are checked as values.
        if line.contains("://") {
            continue;
        }
        assert!(after.contains(line), "lost {line:?} in\n{after}");
    }
}

/// The whole round: connect, check, connect again, put back.
fn round_trip(name: &str, fixture_path: &str) -> String {
    round_trip_expecting(name, fixture_path, wanted(), true)
}

/// `exact_revert`: whether putting the old values back must give the original bytes; not
/// so where a one-line object had to open up to take a multi-line value.
fn round_trip_expecting(
    name: &str,
    fixture_path: &str,
    expected: Endpoint,
    exact_revert: bool,
) -> String {
    let a = adapter(name);
    let text = fixture(fixture_path);
    let (out, edits) = connect(&*a, &text);
    assert_ne!(out, text);

    let now = open(&out);
    assert_eq!(a.read_back(&*now), Some(expected), "{name} reads back");
    assert_rest_unchanged(
        &open(&text).get(&[]).unwrap(),
        &now.get(&[]).unwrap(),
        &edits,
        &mut Vec::new(),
    );
    assert_comments_kept(&text, &out);

    // Idempotent: a second connect, planned from the new file, is byte-identical.
    let (twice, _) = connect(&*a, &out);
    assert_eq!(twice, out, "{name}: a second connect changed the file");

    // What a revert does: old values back, and what was added (down from the first
    // parent that did not exist) removed, gives the original bytes.
    let original = open(&text);
    let mut back = open(&out);
    for e in edits.iter().rev() {
        let path: Vec<&str> = e.path.iter().map(String::as_str).collect();
        match original.get(&path) {
            Some(v) => back.set(&path, &v).unwrap(),
            None => {
                let added = (1..=path.len())
                    .find(|&n| original.get(&path[..n]).is_none())
                    .unwrap();
                back.remove(&path[..added]).unwrap();
            }
        }
    }
    if exact_revert {
        assert_eq!(back.render(), text, "{name}: putting the old values back");
    } else {
        assert_eq!(
            open(&back.render()).get(&[]),
            original.get(&[]),
            "{name}: reverted values"
        );
        assert_comments_kept(&text, &back.render());
    }
    out
}

#[test]
fn openclaw_gets_a_provider_and_the_primary_model() {
    let out = round_trip("openclaw", "openclaw/openclaw.json");
    let d = open(&out);
    let t = target();
    assert_eq!(
        d.get(&["models", "providers", "metaclaw"]),
        Some(json!({
            "api": "openai-completions",
            "baseUrl": t.openai_base,
            "apiKey": t.api_key,
            "models": [{
                "id": "kimi-k2.5",
                "name": "kimi-k2.5",
                "reasoning": false,
                "input": ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": 200000,
                "maxTokens": 8192,
            }],
        }))
    );
    assert_eq!(
        d.get(&["agents", "defaults", "model"]),
        Some(
            json!({"primary": "metaclaw/kimi-k2.5", "fallbacks": ["anthropic/claude-sonnet-4-5"]})
        )
    );
    // The user's allowlist gains MetaClaw's model, so `/model` can switch back to it.
    assert_eq!(
        d.get(&["agents", "defaults", "models"]),
        Some(json!({
            "ollama/llama3.3": {"alias": "llama"},
            "anthropic/claude-sonnet-4-5": {},
            "metaclaw/kimi-k2.5": {},
        }))
    );
    // The sandbox is the user's business.
    assert_eq!(
        d.get(&["agents", "defaults", "sandbox", "mode"]),
        Some(json!("non-main"))
    );
    assert!(out.contains("        mode: \"non-main\", // never switch this off\n"));
    // The user's provider is still there, as written.
    assert!(out.contains(
        "          { id: \"llama3.3\", name: \"Llama 3.3\", contextWindow: 131072, maxTokens: 8192 },\n"
    ));
    // New properties are indented like their siblings.
    assert!(
        out.contains("\n      \"metaclaw\": {\n        \"api\": \"openai-completions\",\n"),
        "{out}"
    );
}

#[test]
fn openclaw_speaks_the_protocol_of_metaclaws_upstream_and_keeps_the_users_choice() {
    let a = adapter("openclaw");
    let edit = |doc: &mut dyn Doc, t: &Target| {
        let edits = a.edits(doc, t).unwrap();
        apply(doc, &edits).unwrap();
    };
    // llm.api is anthropic: OpenClaw is pointed at /v1/messages, nothing to translate.
    let mut anthropic = target();
    anthropic.prefer = Protocol::Anthropic;
    let mut d = open(&fixture("openclaw/openclaw.json"));
    edit(d.as_mut(), &anthropic);
    let provider = d.get(&["models", "providers", "metaclaw"]).unwrap();
    assert_eq!(provider["api"], "anthropic-messages");
    assert_eq!(provider["baseUrl"], anthropic.anthropic_base);
    let back = a.read_back(&*d).unwrap();
    assert_eq!(
        (back.protocol, back.base.as_str()),
        (Protocol::Anthropic, anthropic.anthropic_base.as_str())
    );

    // A user who switched the metaclaw provider to the other protocol keeps it when
    // MetaClaw reconnects at start (here with an OpenAI upstream).
    edit(d.as_mut(), &target());
    let provider = d.get(&["models", "providers", "metaclaw"]).unwrap();
    assert_eq!(
        provider["api"], "anthropic-messages",
        "the user's choice was rewritten"
    );
    assert_eq!(provider["baseUrl"], target().anthropic_base);
}

#[test]
fn openclaw_model_shorthand_becomes_the_object_form() {
    let out = round_trip_expecting("openclaw", "openclaw/shorthand.json5", wanted(), false);
    let d = open(&out);
    assert_eq!(
        d.get(&["agents", "defaults", "model"]),
        Some(json!({"primary": "metaclaw/kimi-k2.5"}))
    );
    assert_eq!(
        d.get(&["agents", "defaults", "sandbox"]),
        Some(json!({"mode": "all"}))
    );
    // The one-line `agents` object opened up rather than holding a multi-line value mid-line.
    assert!(
        out.contains("  agents: {\n    defaults: {\n      model: {\n"),
        "{out}"
    );
}

#[test]
fn openclaw_reads_back_the_users_own_provider() {
    let a = adapter("openclaw");
    let d = open(&fixture("openclaw/openclaw.json"));
    assert_eq!(
        a.read_back(&*d),
        Some(Endpoint {
            protocol: Protocol::OpenAi,
            base: "http://127.0.0.1:11434/v1".into(),
            api_key: "ollama-local".into(),
            model: "llama3.3".into(),
        })
    );
    // A built-in provider has no base in the file: nothing to tell.
    assert_eq!(
        a.read_back(&*open(&fixture("openclaw/shorthand.json5"))),
        None
    );
}

#[test]
fn openclaw_refuses_a_providers_value_that_is_not_an_object() {
    let a = adapter("openclaw");
    let text = "{\n  models: { providers: \"none\" },\n}\n";
    let d = open(text);
    let edits = a.edits(&*d, &target()).unwrap();
    let mut after = open(text);
    let err = apply(&mut *after, &edits).unwrap_err();
    assert!(err.0.contains("models.providers"), "{}", err.0);
    assert_eq!(after.render(), text);
}

#[test]
fn copaw_active_model_names_the_metaclaw_provider() {
    let a = adapter("copaw");
    assert!(a.creates_config());
    let t = target();
    // CoPaw's own layout (`json.dump(indent=2)`, no newline at the end).
    let (out, _) = connect(&*a, &fixture("copaw/active_model.json"));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v, json!({"provider_id": "metaclaw", "model": t.model}));
    // Created from nothing too, and a second connect changes nothing.
    let (fresh, _) = connect(&*a, "{}\n");
    let v: Value = serde_json::from_str(&fresh).unwrap();
    assert_eq!(v, json!({"provider_id": "metaclaw", "model": t.model}));
    let (twice, _) = connect(&*a, &fresh);
    assert_eq!(twice, fresh);
}

#[test]
fn copaw_provider_file_is_what_copaw_add_provider_writes() {
    let a = adapter("copaw");
    let t = target();
    let path = PathBuf::from("/h/.copaw.secret/providers/custom/metaclaw.json");
    let d = open("{}\n");
    let edits = a.companion_edits(&path, &*d, &t).unwrap();
    let mut after = open("{}\n");
    apply(&mut *after, &edits).unwrap();
    let v: Value = serde_json::from_str(&after.render()).unwrap();
    // The fields `copaw models add-provider metaclaw` + `add-model` write (CoPaw 1.0.2).
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "name",
            "base_url",
            "api_key",
            "chat_model",
            "models",
            "extra_models",
            "api_key_prefix",
            "is_local",
            "freeze_url",
            "require_api_key",
            "is_custom",
            "support_model_discovery",
            "support_connection_check",
            "generate_kwargs",
            "meta",
        ]
    );
    assert_eq!(v["id"], "metaclaw");
    assert_eq!(v["base_url"], json!(t.openai_base));
    assert_eq!(v["api_key"], json!(t.api_key));
    assert_eq!(v["chat_model"], "OpenAIChatModel");
    assert_eq!(v["extra_models"][0]["id"], json!(t.model));

    // An agent with a model of its own is repointed; one without is left alone.
    let agent = PathBuf::from("/h/.copaw/workspaces/default/agent.json");
    let own = "{\n  \"id\": \"default\",\n  \"active_model\": {\"provider_id\": \"openai\", \"model\": \"gpt-4o\"}\n}";
    let edits = a.companion_edits(&agent, &*open(own), &t).unwrap();
    assert_eq!(
        edits,
        vec![Edit::set(
            &["active_model"],
            json!({"provider_id": "metaclaw", "model": t.model})
        )]
    );
    for none in ["{\"id\": \"default\"}", "{\"active_model\": null}"] {
        assert!(
            a.companion_edits(&agent, &*open(none), &t)
                .unwrap()
                .is_empty()
        );
    }
}

#[test]
fn picoclaw_replaces_its_stale_entry_in_place() {
    let out = round_trip("picoclaw", "picoclaw/config.json");
    let d = open(&out);
    let t = target();
    assert_eq!(
        d.get(&["model_list"]),
        Some(json!([
            {
                "model_name": "gpt4",
                "model": "openai/gpt-5.2",
                "api_key": "sk-openai-user",
                "api_base": "https://api.openai.com/v1"
            },
            {
                "model_name": "metaclaw",
                "model": "openai/kimi-k2.5",
                "api_key": t.api_key,
                "api_base": t.openai_base,
                "request_timeout": 300
            },
            {
                "model_name": "claude",
                "model": "anthropic/claude-sonnet-4.6",
                "api_key": "sk-ant-user"
            }
        ]))
    );
    assert_eq!(
        d.get(&["agents", "defaults", "model_name"]),
        Some(json!("metaclaw"))
    );
    // The neighbours are untouched text.
    let text = fixture("picoclaw/config.json");
    let gpt4 = &text[text.find("    {\n      \"model_name\": \"gpt4\"").unwrap()..];
    let gpt4 = &gpt4[..gpt4.find("},").unwrap()];
    assert!(out.contains(gpt4));
}

#[test]
fn picoclaw_appends_its_entry_and_keeps_the_others() {
    let out = round_trip("picoclaw", "picoclaw/fresh.json");
    let d = open(&out);
    let Some(Value::Array(items)) = d.get(&["model_list"]) else {
        panic!("no model_list in {out}");
    };
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["model_name"], json!("deepseek"));
    assert_eq!(
        items[1],
        json!({
            "model_name": "metaclaw",
            "model": "openai/kimi-k2.5",
            "api_key": "mc-proxy-key-7f3a",
            "api_base": "http://127.0.0.1:30123/v1"
        })
    );
}

#[test]
fn picoclaw_keeps_one_entry_when_the_user_duplicated_it() {
    let a = adapter("picoclaw");
    let text = r#"{"model_list": [{"model_name": "metaclaw", "model": "openai/a"}, {"model_name": "x"}, {"model_name": "metaclaw", "model": "openai/b"}]}"#;
    let (out, _) = connect(&*a, text);
    let d = open(&out);
    let Some(Value::Array(items)) = d.get(&["model_list"]) else {
        panic!("no model_list");
    };
    let names: Vec<&Value> = items.iter().map(|i| &i["model_name"]).collect();
    assert_eq!(names, [&json!("metaclaw"), &json!("x")]);
    assert_eq!(a.read_back(&*d), Some(wanted()));
    assert_eq!(connect(&*a, &out).0, out);
}

#[test]
fn picoclaw_refuses_a_model_list_that_is_not_a_list() {
    let a = adapter("picoclaw");
    let d = open(r#"{"model_list": {"model_name": "gpt4"}}"#);
    let err = a.edits(&*d, &target()).unwrap_err();
    assert!(err.contains("model_list"), "{err}");
}

#[test]
fn nemoclaw_sets_only_the_endpoint_keys() {
    // The key lives in OpenShell, not in this file.
    let expected = Endpoint {
        api_key: String::new(),
        ..wanted()
    };
    let out = round_trip_expecting("nemoclaw", "nemoclaw/config.json", expected, true);
    let d = open(&out);
    let v = d.get(&[]).unwrap();
    assert_eq!(
        v,
        json!({
            "endpointType": "custom",
            "endpointUrl": "http://127.0.0.1:30123/v1",
            "ncpPartner": null,
            "model": "kimi-k2.5",
            "profile": "ncp",
            "credentialEnv": "OPENAI_API_KEY",
            "sandboxName": "my-assistant",
            "policyPresets": ["pypi", "npm"],
            "onboardedAt": "2026-03-18T09:12:44.000Z"
        })
    );
    // The key never goes into this file.
    assert!(!out.contains(&target().api_key));
}

#[test]
fn nemoclaw_notes_give_the_openshell_step_without_the_key() {
    let a = adapter("nemoclaw");
    let notes = a.notes().join("\n");
    assert!(notes.contains("openshell provider create --name metaclaw --type openai"));
    assert!(notes.contains("OPENAI_API_KEY=<your MetaClaw proxy key>"));
    assert!(notes.contains("openshell inference set --provider metaclaw"));
    assert!(!notes.contains(&target().api_key));
}

struct NoRunner;

impl Runner for NoRunner {
    fn run(&self, _argv: &[String], _timeout: Duration) -> std::io::Result<CommandOutput> {
        Err(std::io::Error::other("tests run nothing"))
    }
}

#[test]
fn files_binaries_and_restarts() {
    let env = Env {
        home: PathBuf::from("/home/someone"),
        path: Vec::new(),
        vars: Default::default(),
        runner: Box::new(NoRunner),
    };
    let cases = [
        (
            "openclaw",
            ".openclaw/openclaw.json",
            "openclaw",
            // The gateway hot-reloads `models` and `agents`; restarted only with hot reload
            // off and a service installed (tests/openclaw.rs).
            "",
            false,
        ),
        (
            "copaw",
            ".copaw.secret/providers/active_model.json",
            "copaw",
            // CoPaw has no command that reloads a running app (`copaw daemon restart`
            // says "Not running inside app"): the notes say to restart it.
            "",
            true,
        ),
        (
            "picoclaw",
            ".picoclaw/config.json",
            "picoclaw",
            "picoclaw gateway restart",
            false,
        ),
        (
            "nemoclaw",
            ".nemoclaw/config.json",
            "nemoclaw",
            "openclaw gateway restart",
            false,
        ),
    ];
    for (name, file, binary, restart, creates) in cases {
        let a = adapter(name);
        assert_eq!(a.name(), name);
        assert_eq!(a.protocol(), Protocol::OpenAi);
        assert_eq!(a.format(), Format::Json5);
        assert_eq!(a.binary(), Some(binary));
        assert_eq!(a.creates_config(), creates, "{name}");
        assert_eq!(
            a.config_file(&env).unwrap(),
            Some(PathBuf::from("/home/someone").join(file))
        );
        assert_eq!(
            a.restart_command(&env).map(|v| v.join(" ")),
            Some(restart.to_owned()).filter(|r| !r.is_empty())
        );
    }
}

#[test]
fn empty_and_corrupt_files_are_refused() {
    for text in ["", "   \n", "// nothing but a comment\n"] {
        let err = doc::open(Format::Json5, text).err().unwrap();
        assert!(err.0.contains("empty"), "{}", err.0);
    }
    let err = doc::open(Format::Json5, &fixture("openclaw/corrupt.json"))
        .err()
        .unwrap();
    assert!(err.0.contains("line 5"), "{}", err.0);
    // The file's contents (possibly keys) are not quoted back.
    assert!(!err.0.contains("11434"), "{}", err.0);
    let err = doc::open(Format::Json5, "[\"not\", \"an object\"]")
        .err()
        .unwrap();
    assert!(err.0.contains("not an object"), "{}", err.0);
}

#[test]
fn every_fixture_renders_unchanged_when_untouched() {
    for rel in [
        "openclaw/openclaw.json",
        "openclaw/shorthand.json5",
        "copaw/config.json",
        "picoclaw/config.json",
        "picoclaw/fresh.json",
        "nemoclaw/config.json",
    ] {
        let text = fixture(rel);
        assert_eq!(open(&text).render(), text, "{rel}");
    }
}
