//! `openclaw`: `~/.openclaw/openclaw.json` (JSON5) gains a `metaclaw` provider and makes
//! it the default agents' primary model. The sandbox mode is never touched (the Python
//! version switched it off as a side effect).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct OpenClaw;

/// The provider name MetaClaw registers; models are addressed as `metaclaw/<id>`.
const PROVIDER: &str = "metaclaw";
const MODEL: [&str; 3] = ["agents", "defaults", "model"];
const ALLOWLIST: [&str; 3] = ["agents", "defaults", "models"];
const OPENAI_API: &str = "openai-completions";
const ANTHROPIC_API: &str = "anthropic-messages";

fn text(doc: &dyn Doc, path: &[&str]) -> Option<String> {
    match doc.get(path)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// The default agents' primary model, `provider/model`; OpenClaw also accepts the
/// shorthand `model: "provider/model"`.
fn primary(doc: &dyn Doc) -> Option<String> {
    match doc.get(&MODEL)? {
        Value::String(s) => Some(s),
        Value::Object(map) => map.get("primary")?.as_str().map(str::to_owned),
        _ => None,
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
        Ok(Some(env.home_path(".openclaw/openclaw.json")))
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
        // from: list MetaClaw's model there too (never creating the list, which would
        // restrict the user, nor replacing an entry the user already wrote).
        let model_ref = format!("{PROVIDER}/{}", target.model);
        if let Some(Value::Object(allowed)) = doc.get(&ALLOWLIST)
            && !allowed.contains_key(&model_ref)
        {
            edits.push(Edit::set(
                &["agents", "defaults", "models", &model_ref],
                json!({}),
            ));
        }
        Ok(edits)
    }

    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        let primary = primary(doc)?;
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

    fn restart_command(&self, _env: &Env) -> Option<Vec<String>> {
        Some(vec!["openclaw".into(), "gateway".into(), "restart".into()])
    }
}
