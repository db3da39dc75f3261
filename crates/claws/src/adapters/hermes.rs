//! `hermes`: `$HERMES_HOME/config.yaml` (default `~/.hermes/config.yaml`). MetaClaw is
//! upserted by name into `custom_providers` and selected as `model.provider`
//! `custom:metaclaw`; other providers, settings and comments stay as written.
//!
//! As Hermes' own `hermes model` does when it selects a named custom provider, the old
//! `model.base_url`, `model.api_key` and `model.api_mode` go: Hermes reads `model.base_url`
//! for more than the chat (context-length and model-list probes, the credential pool,
//! auxiliary clients), so leaving it would keep sending those requests to the old endpoint.
//!
//! `hermes gateway restart` restarts a gateway *service* (systemd, launchd); without one it
//! stops any gateway and runs a new one in the foreground, which would never return. So the
//! restart runs only when the profile's service is installed; otherwise MetaClaw says what
//! to do (the `hermes` CLI reads the config on every start).

mod plugin;

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub use plugin::HermesPlugin;

pub struct Hermes;

const NAME: &str = "metaclaw";
const PROVIDER: &str = "custom:metaclaw";
/// What `hermes model` drops from `model` when it selects a named custom provider.
const STALE: [&str; 3] = ["base_url", "api_key", "api_mode"];

fn text(doc: &dyn Doc, path: &[&str]) -> Option<String> {
    match doc.get(path)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

fn field(item: &Value, key: &str) -> Option<String> {
    item.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl Adapter for Hermes {
    fn name(&self) -> &'static str {
        "hermes"
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn binary(&self) -> Option<&'static str> {
        Some("hermes")
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        let path = match env.var("HERMES_HOME").filter(|h| !h.is_empty()) {
            Some(home) => PathBuf::from(home).join("config.yaml"),
            None => env.home_path(".hermes/config.yaml"),
        };
        Ok(Some(path))
    }

    fn format(&self) -> Format {
        Format::Yaml
    }

    fn edits(&self, doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        let mut entry = Map::new();
        entry.insert("name".into(), json!(NAME));
        entry.insert("base_url".into(), json!(target.openai_base));
        entry.insert("api_key".into(), json!(target.api_key));
        entry.insert(
            "models".into(),
            json!({ target.model.as_str(): { "context_length": target.context_window } }),
        );

        // The whole list is set, but the YAML editor changes only the items that differ,
        // so the user's other providers keep their comments and layout.
        let providers = match doc.get(&["custom_providers"]) {
            None | Some(Value::Null) => vec![Value::Object(entry)],
            Some(Value::Array(items)) => {
                let mut items = items;
                match items
                    .iter()
                    .position(|i| field(i, "name").as_deref() == Some(NAME))
                {
                    Some(at) => {
                        // Keep settings the user added to our entry; ours win.
                        let mut merged = items[at].as_object().cloned().unwrap_or_default();
                        merged.extend(entry);
                        items[at] = Value::Object(merged);
                    }
                    None => items.push(Value::Object(entry)),
                }
                items
            }
            Some(_) => return Err("`custom_providers` is not a list".into()),
        };

        let mut edits = vec![Edit::set(&["custom_providers"], Value::Array(providers))];
        match doc.get(&["model"]) {
            // Older configs name the model as a plain string: replace it with a mapping.
            Some(Value::String(_)) | Some(Value::Null) => edits.push(Edit::set(
                &["model"],
                json!({ "default": target.model, "provider": PROVIDER }),
            )),
            None | Some(Value::Object(_)) => {
                edits.push(Edit::set(&["model", "provider"], json!(PROVIDER)));
                edits.push(Edit::set(&["model", "default"], json!(target.model)));
                for key in STALE {
                    if doc.get(&["model", key]).is_some() {
                        edits.push(Edit::remove(&["model", key]));
                    }
                }
            }
            Some(_) => return Err("`model` is neither a model name nor a mapping".into()),
        }
        Ok(edits)
    }

    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        let name = text(doc, &["model", "provider"])?
            .strip_prefix("custom:")?
            .to_owned();
        let providers = doc.get(&["custom_providers"])?;
        let entry = providers
            .as_array()?
            .iter()
            .find(|i| field(i, "name").as_deref() == Some(name.as_str()))?;
        Some(Endpoint {
            protocol: Protocol::OpenAi,
            base: field(entry, "base_url")?,
            api_key: field(entry, "api_key").unwrap_or_default(),
            model: text(doc, &["model", "default"])?,
        })
    }

    fn restart_command(&self, env: &Env) -> Option<Vec<String>> {
        restart_command(env)
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "Hermes' gateway is restarted only when it runs as a service (systemd, launchd); \
             a gateway you started yourself (`hermes gateway run`) must be restarted by you, \
             and `hermes` chats started before connecting keep the old provider until restarted"
                .to_owned(),
        ]
    }
}

/// `hermes gateway restart`, only when this profile's gateway runs as a service (proxy and
/// plugin alike).
fn restart_command(env: &Env) -> Option<Vec<String>> {
    service_installed(env).then(|| vec!["hermes".into(), "gateway".into(), "restart".into()])
}

/// `HERMES_HOME`, or `~/.hermes`.
fn hermes_home(env: &Env) -> PathBuf {
    match env.var("HERMES_HOME").filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home),
        None => env.home_path(".hermes"),
    }
}

/// Hermes' service-name suffix for a profile (`_profile_suffix` in `hermes_cli/gateway.py`):
/// none for `~/.hermes`, the profile's name for `~/.hermes/profiles/<name>`, else the first
/// 8 hex digits of the SHA-256 of the home's path.
fn profile_suffix(env: &Env) -> String {
    let canon = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    let home = canon(hermes_home(env));
    let root = canon(env.home_path(".hermes"));
    if home == root {
        return String::new();
    }
    if let Ok(rel) = home.strip_prefix(root.join("profiles")) {
        let parts: Vec<_> = rel.iter().filter_map(|p| p.to_str()).collect();
        if let [name] = parts.as_slice() {
            let ok = name.len() <= 64
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
            if ok {
                return (*name).to_owned();
            }
        }
    }
    let hash = crate::backup::sha256_hex(home.to_string_lossy().as_bytes());
    hash.chars().take(8).collect()
}

/// Whether this profile's gateway is installed as a service (a systemd unit, user or
/// system, or a launchd agent): only then does `hermes gateway restart` return.
fn service_installed(env: &Env) -> bool {
    let suffix = profile_suffix(env);
    let name = if suffix.is_empty() {
        "hermes-gateway".to_owned()
    } else {
        format!("hermes-gateway-{suffix}")
    };
    let label = if suffix.is_empty() {
        "ai.hermes.gateway".to_owned()
    } else {
        format!("ai.hermes.gateway-{suffix}")
    };
    let candidates = [
        env.home_path(&format!(".config/systemd/user/{name}.service")),
        PathBuf::from(format!("/etc/systemd/system/{name}.service")),
        env.home_path(&format!("Library/LaunchAgents/{label}.plist")),
    ];
    candidates.iter().any(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::doc::open;
    use crate::target::Target;

    fn env(home: &std::path::Path, hermes_home: Option<&str>) -> Env {
        let mut vars = std::collections::HashMap::new();
        if let Some(h) = hermes_home {
            vars.insert("HERMES_HOME".to_owned(), h.to_owned());
        }
        Env {
            home: home.to_owned(),
            path: Vec::new(),
            vars,
            runner: Box::new(crate::env::SystemRunner),
        }
    }

    #[test]
    fn restarts_only_an_installed_gateway_service() {
        let dir = tempfile::tempdir().unwrap();
        let e = env(dir.path(), None);
        assert_eq!(Hermes.restart_command(&e), None);
        let unit = dir
            .path()
            .join(".config/systemd/user/hermes-gateway.service");
        std::fs::create_dir_all(unit.parent().unwrap()).unwrap();
        std::fs::write(&unit, "[Service]\n").unwrap();
        assert_eq!(
            Hermes.restart_command(&e),
            Some(vec!["hermes".into(), "gateway".into(), "restart".into()])
        );
        // Another profile's service is not this one's.
        let p = dir.path().join(".hermes/profiles/coder");
        std::fs::create_dir_all(&p).unwrap();
        let e = env(dir.path(), p.to_str());
        assert_eq!(profile_suffix(&e), "coder");
        assert_eq!(Hermes.restart_command(&e), None);
    }

    #[test]
    fn the_old_endpoint_goes_as_hermes_model_drops_it() {
        let original = "model:\n  default: gpt-4o\n  provider: custom\n  base_url: https://old.example/v1\n  api_key: sk-old-0123456789abcdef\n  api_mode: chat_completions\n";
        let target = Target::local(30000, "mc-key-0123456789abcdef", "fake-model");
        let before = open(Format::Yaml, original).unwrap();
        let edits = Hermes.edits(before.as_ref(), &target).unwrap();
        let mut after = open(Format::Yaml, original).unwrap();
        for e in &edits {
            let p: Vec<&str> = e.path.iter().map(String::as_str).collect();
            match &e.value {
                Some(v) => after.set(&p, v).unwrap(),
                None => {
                    after.remove(&p).unwrap();
                }
            }
        }
        for key in STALE {
            assert_eq!(after.get(&["model", key]), None, "{key}");
        }
        let back = Hermes.read_back(after.as_ref()).unwrap();
        assert_eq!(back.base, "http://127.0.0.1:30000/v1");
        // Idempotent: a second connect changes nothing.
        let again = Hermes.edits(after.as_ref(), &target).unwrap();
        assert!(again.iter().all(|e| e.value.is_some()));
    }
}
