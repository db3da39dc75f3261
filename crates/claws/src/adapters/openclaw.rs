//! `openclaw`: `~/.openclaw/openclaw.json` (JSON5; found as OpenClaw finds it) gains a
//! `metaclaw` provider and makes it the default agents' primary model, and the primary of
//! every agent that pins its own (OpenClaw takes an agent's own `model` before the
//! defaults). The sandbox mode is never touched (the Python version switched it off as a
//! side effect).
//!
//! Nothing is restarted: OpenClaw's gateway applies `models` and `agents` changes by itself
//! (config hot reload, on by default), and `openclaw agent` reads the config on every run.
//! Only with hot reload switched off (`gateway.reload.mode: off`) is the gateway restarted,
//! and only when it runs as a service: `openclaw gateway restart` cannot restart a gateway
//! that is not one, and fails when none runs.

mod paths;
mod plugin;

pub use plugin::OpenClawPlugin;

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{self, Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct OpenClaw;

/// The provider name MetaClaw registers; models are addressed as `metaclaw/<id>`.
const PROVIDER: &str = "metaclaw";
const MODEL: [&str; 3] = ["agents", "defaults", "model"];
const ALLOWLIST: [&str; 3] = ["agents", "defaults", "models"];
/// The agents' roster, by id (`agents.entries.<id>`).
const ENTRIES: [&str; 2] = ["agents", "entries"];
const OPENAI_API: &str = "openai-completions";
const ANTHROPIC_API: &str = "anthropic-messages";

fn text(doc: &dyn Doc, path: &[&str]) -> Option<String> {
    match doc.get(path)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// The primary of a `model` value, `provider/model`; OpenClaw also accepts the shorthand
/// `model: "provider/model"`.
fn primary_of(model: &Value) -> Option<String> {
    match model {
        Value::String(s) => Some(s.clone()),
        Value::Object(map) => map.get("primary")?.as_str().map(str::to_owned),
        _ => None,
    }
}

/// The default agents' primary model.
fn primary(doc: &dyn Doc) -> Option<String> {
    primary_of(&doc.get(&MODEL)?)
}

/// The agents that pin their own primary model: (id, their `model` value).
fn pinned(doc: &dyn Doc) -> Vec<(String, Value)> {
    let Some(Value::Object(entries)) = doc.get(&ENTRIES) else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter_map(|(id, entry)| {
            let model = entry.get("model")?;
            primary_of(model).map(|_| (id, model.clone()))
        })
        .collect()
}

fn provider_of(model_ref: &str) -> &str {
    model_ref.split_once('/').map_or(model_ref, |(p, _)| p)
}

/// The `agents.defaults.models`-style allowlist at `path` gains `model_ref` when it exists
/// and lacks it (never created: that would restrict the user).
fn allow(doc: &dyn Doc, path: &[&str], model_ref: &str, edits: &mut Vec<Edit>) {
    if let Some(Value::Object(allowed)) = doc.get(path)
        && !allowed.contains_key(model_ref)
    {
        let mut at = path.to_vec();
        at.push(model_ref);
        edits.push(Edit::set(&at, json!({})));
    }
}

impl Adapter for OpenClaw {
    fn name(&self) -> &'static str {
        "openclaw"
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn binary(&self) -> Option<&'static str> {
        Some("openclaw")
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(paths::config_file(env)))
    }

    fn format(&self) -> Format {
        Format::Json5
    }

    fn edits(&self, doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        // OpenClaw speaks both protocols. A protocol the user already chose for the metaclaw
        // provider is kept (a restart reconnects without undoing it); otherwise the one
        // MetaClaw's upstream speaks, so nothing needs translating.
        let protocol = match text(doc, &["models", "providers", PROVIDER, "api"]).as_deref() {
            Some(ANTHROPIC_API) => Protocol::Anthropic,
            Some(OPENAI_API) => Protocol::OpenAi,
            _ => target.prefer,
        };
        let api = match protocol {
            Protocol::Anthropic => ANTHROPIC_API,
            Protocol::OpenAi => OPENAI_API,
        };
        let provider = json!({
            "api": api,
            "baseUrl": target.base(protocol),
            "apiKey": target.api_key,
            "models": [{
                "id": target.model,
                "name": target.model,
                "reasoning": false,
                "input": ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": target.context_window,
                "maxTokens": target.max_tokens,
            }],
        });
        let primary = Value::String(format!("{PROVIDER}/{}", target.model));
        // The string shorthand becomes the object form (keeping nothing else to keep);
        // otherwise only `primary` changes and the user's fallbacks stay.
        let model_edit = match doc.get(&MODEL) {
            Some(Value::String(_)) => Edit::set(&MODEL, json!({ "primary": primary })),
            _ => Edit::set(&["agents", "defaults", "model", "primary"], primary),
        };
        let mut edits = vec![
            Edit::set(&["models", "providers", PROVIDER], provider),
            model_edit,
        ];
        // `agents.defaults.models`, when the user has one, is the allowlist `/model` picks
        // from: list MetaClaw's model there too (never replacing an entry the user wrote).
        let model_ref = format!("{PROVIDER}/{}", target.model);
        allow(doc, &ALLOWLIST, &model_ref, &mut edits);
        // An agent with its own model never reads the defaults: its primary changes too
        // (in the shape it has; fallbacks stay), and its own allowlist gains ours.
        for (id, model) in pinned(doc) {
            edits.push(match model {
                Value::String(_) => {
                    Edit::set(&["agents", "entries", &id, "model"], json!(model_ref))
                }
                _ => Edit::set(
                    &["agents", "entries", &id, "model", "primary"],
                    json!(model_ref),
                ),
            });
            allow(
                doc,
                &["agents", "entries", &id, "models"],
                &model_ref,
                &mut edits,
            );
        }
        Ok(edits)
    }

    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        // Where every agent goes: an agent pinning another provider than the defaults'
        // is reported, so "connected" means no agent still talks to its old provider.
        let default = primary(doc)?;
        let primary = pinned(doc)
            .iter()
            .filter_map(|(_, m)| primary_of(m))
            .find(|p| provider_of(p) != provider_of(&default))
            .unwrap_or(default);
        let (provider, model) = primary.split_once('/')?;
        let base = text(doc, &["models", "providers", provider, "baseUrl"])?;
        let protocol = match text(doc, &["models", "providers", provider, "api"]).as_deref() {
            Some(ANTHROPIC_API) => Protocol::Anthropic,
            _ => Protocol::OpenAi,
        };
        Some(Endpoint {
            protocol,
            base,
            api_key: text(doc, &["models", "providers", provider, "apiKey"]).unwrap_or_default(),
            model: model.to_owned(),
        })
    }

    fn restart_command(&self, env: &Env) -> Option<Vec<String>> {
        restart_command(env)
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "OpenClaw's gateway applies the change by itself (config hot reload) and \
             `openclaw agent` reads it on its next run; with `gateway.reload.mode: off`, a \
             gateway not installed as a service must be restarted by you"
                .to_owned(),
        ]
    }
}

/// The config file OpenClaw reads (for its plugins, say).
pub fn config_file(env: &Env) -> PathBuf {
    paths::config_file(env)
}

/// `openclaw gateway restart`, only when the gateway does not apply edits by itself (reload
/// off) and runs as a service that command can restart. Proxy and plugin alike.
fn restart_command(env: &Env) -> Option<Vec<String>> {
    (!hot_reloads(env) && paths::gateway_service_installed(env))
        .then(|| vec!["openclaw".into(), "gateway".into(), "restart".into()])
}

/// Whether the gateway applies config edits by itself: unless `gateway.reload.mode` is
/// `off` (a config that cannot be read counts as the default, `hybrid`).
fn hot_reloads(env: &Env) -> bool {
    let Ok(text) = std::fs::read_to_string(paths::config_file(env)) else {
        return true;
    };
    doc::open(Format::Json5, &text)
        .ok()
        .and_then(|d| d.get(&["gateway", "reload", "mode"]))
        .is_none_or(|mode| mode != json!("off"))
}
