//! `copaw` (CoPaw 1.0.x): MetaClaw becomes a CoPaw *provider*, registered the way
//! `copaw models add-provider metaclaw` / `add-model` and activating it do, because CoPaw
//! takes its model from its provider registry and never reads a model from `config.json`:
//!
//! - `<secret>/providers/custom/metaclaw.json`: the custom provider (MetaClaw's base and
//!   proxy key, the model), in the layout CoPaw writes (`<secret>` is `COPAW_SECRET_DIR`,
//!   default `~/.copaw.secret`);
//! - `<secret>/providers/active_model.json`: `{provider_id, model}`, the global active model
//!   (the main file);
//! - each agent's `<workspace>/agent.json` (agents listed in `~/.copaw/config.json`) whose
//!   own `active_model` is set: CoPaw prefers it over the global one, so it is repointed too.
//!
//! CoPaw encrypts a plaintext key the first time it loads the provider, rewriting the file;
//! disconnect still removes it (nothing of the user's is in it). It loads providers when it
//! starts and has no command that reloads a running app, so nothing is restarted.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct CoPaw;

/// The provider id MetaClaw registers.
const ID: &str = "metaclaw";

fn expand(env: &Env, p: &str) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => env.home_path(rest),
        None if p == "~" => env.home.clone(),
        None => PathBuf::from(p),
    }
}

/// `COPAW_WORKING_DIR`, default `~/.copaw`.
fn working_dir(env: &Env) -> PathBuf {
    match env.var("COPAW_WORKING_DIR").filter(|v| !v.is_empty()) {
        Some(d) => expand(env, d),
        None => env.home_path(".copaw"),
    }
}

/// `COPAW_SECRET_DIR`, default the working directory with `.secret` appended.
fn secret_dir(env: &Env) -> PathBuf {
    match env.var("COPAW_SECRET_DIR").filter(|v| !v.is_empty()) {
        Some(d) => expand(env, d),
        None => {
            let mut s = working_dir(env).into_os_string();
            s.push(".secret");
            PathBuf::from(s)
        }
    }
}

fn providers_dir(env: &Env) -> PathBuf {
    secret_dir(env).join("providers")
}

fn read_json(path: &Path) -> Result<Option<Value>, String> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("{} is not JSON CoPaw can read ({e})", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The agents in `config.json`: `(id, workspace's agent.json)`, the active one first.
fn agents(env: &Env) -> Result<Vec<(String, PathBuf)>, String> {
    let Some(config) = read_json(&working_dir(env).join("config.json"))? else {
        return Ok(Vec::new());
    };
    let active = config
        .pointer("/agents/active_agent")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_owned();
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    if let Some(profiles) = config
        .pointer("/agents/profiles")
        .and_then(Value::as_object)
    {
        for (id, p) in profiles {
            let dir = match text(p, "workspace_dir") {
                Some(d) => expand(env, d),
                None => working_dir(env).join("workspaces").join(id),
            };
            out.push((id.clone(), dir.join("agent.json")));
        }
    }
    out.sort_by_key(|(id, _)| *id != active);
    Ok(out)
}

/// `{provider_id, model}` when both are set.
fn slot(v: &Value) -> Option<(String, String)> {
    Some((
        text(v, "provider_id")?.to_owned(),
        text(v, "model")?.to_owned(),
    ))
}

/// The provider as `copaw models add-provider` + `add-model` write it (`ProviderInfo`'s
/// fields, in its order), with MetaClaw's base, key and model.
fn provider(target: &Target) -> Vec<(&'static str, Value)> {
    vec![
        ("id", json!(ID)),
        ("name", json!("MetaClaw")),
        ("base_url", json!(target.openai_base)),
        ("api_key", json!(target.api_key)),
        ("chat_model", json!("OpenAIChatModel")),
        ("models", json!([])),
        (
            "extra_models",
            json!([{
                "id": target.model,
                "name": target.model,
                "supports_multimodal": null,
                "supports_image": null,
                "supports_video": null,
                "probe_source": null,
                "generate_kwargs": {},
            }]),
        ),
        ("api_key_prefix", json!("")),
        ("is_local", json!(false)),
        ("freeze_url", json!(false)),
        ("require_api_key", json!(true)),
        ("is_custom", json!(true)),
        ("support_model_discovery", json!(false)),
        ("support_connection_check", json!(false)),
        ("generate_kwargs", json!({})),
        ("meta", json!({})),
    ]
}

impl Adapter for CoPaw {
    fn name(&self) -> &'static str {
        "copaw"
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn binary(&self) -> Option<&'static str> {
        Some("copaw")
    }

    /// The global active model, `<secret>/providers/active_model.json`.
    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(providers_dir(env).join("active_model.json")))
    }

    /// Plain JSON, which the JSON5 editor writes back as plain JSON.
    fn format(&self) -> Format {
        Format::Json5
    }

    fn creates_config(&self) -> bool {
        true
    }

    fn edits(&self, _doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        Ok(vec![
            Edit::set(&["provider_id"], json!(ID)),
            Edit::set(&["model"], json!(target.model)),
        ])
    }

    /// The active model alone does not say where it points: see [`Self::resolve_endpoint`].
    fn read_back(&self, _doc: &dyn Doc) -> Option<Endpoint> {
        None
    }

    fn companion_files(&self, env: &Env) -> Result<Vec<(PathBuf, bool)>, ClawError> {
        let mut files = vec![(
            providers_dir(env).join("custom").join(format!("{ID}.json")),
            true,
        )];
        let agents = agents(env).map_err(|detail| ClawError::ConfigCorrupt {
            agent: "copaw".into(),
            path: working_dir(env).join("config.json"),
            detail,
        })?;
        files.extend(agents.into_iter().map(|(_, p)| (p, false)));
        Ok(files)
    }

    fn companion_edits(
        &self,
        path: &Path,
        doc: &dyn Doc,
        target: &Target,
    ) -> Result<Vec<Edit>, String> {
        if path.file_name().and_then(|n| n.to_str()) == Some("agent.json") {
            // Only an agent with a model of its own: the others follow the global one.
            let own = doc.get(&["active_model"]).as_ref().and_then(slot);
            return Ok(match own {
                Some(_) => vec![Edit::set(
                    &["active_model"],
                    json!({"provider_id": ID, "model": target.model}),
                )],
                None => Vec::new(),
            });
        }
        Ok(provider(target)
            .into_iter()
            .map(|(k, v)| Edit::set(&[k], v))
            .collect())
    }

    /// As CoPaw picks a model: the active agent's own `active_model`, else the global
    /// one; then that provider's file (custom, else built-in) for base and key.
    fn resolve_endpoint(&self, env: &Env) -> Option<Result<Option<Endpoint>, String>> {
        let resolved = (|| {
            let mut chosen = None;
            if let Some((_, agent_json)) = agents(env)?.into_iter().next()
                && let Some(a) = read_json(&agent_json)?
            {
                chosen = a.get("active_model").and_then(slot);
            }
            let providers = providers_dir(env);
            if chosen.is_none() {
                chosen = read_json(&providers.join("active_model.json"))?
                    .as_ref()
                    .and_then(slot);
            }
            let Some((pid, model)) = chosen else {
                return Ok(None);
            };
            let mut record = None;
            for dir in ["custom", "builtin"] {
                if let Some(r) = read_json(&providers.join(dir).join(format!("{pid}.json")))? {
                    record = Some(r);
                    break;
                }
            }
            // A built-in provider at its built-in address: not MetaClaw, nothing to read.
            let Some(base) = record.as_ref().and_then(|r| text(r, "base_url")) else {
                return Ok(None);
            };
            Ok(Some(Endpoint {
                protocol: Protocol::OpenAi,
                base: base.to_owned(),
                api_key: record
                    .as_ref()
                    .and_then(|r| text(r, "api_key"))
                    .unwrap_or_default()
                    .to_owned(),
                model,
            }))
        })();
        Some(resolved)
    }

    fn unreadable_key(&self, key: &str) -> Option<String> {
        key.starts_with("ENC:").then(|| {
            "CoPaw has encrypted the provider's key (it does so the first time it loads a \
             provider), so MetaClaw cannot read it back to send a test request; `metaclaw \
             agent status` shows where CoPaw points, and `copaw task -i ping` tests it for real"
                .to_owned()
        })
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "MetaClaw is CoPaw's provider `metaclaw`, made the active model (and the model of \
             every agent that had its own). CoPaw loads providers when it starts and has no \
             reload command: restart `copaw app` (or the CoPaw desktop app) yourself; \
             `copaw task` picks it up at once"
                .to_owned(),
        ]
    }
}
