//! `hermes`: `$HERMES_HOME/config.yaml` (default `~/.hermes/config.yaml`). MetaClaw is
//! upserted by name into `custom_providers` and selected as `model.provider`
//! `custom:metaclaw`; other providers, settings and comments stay as written.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct Hermes;

const NAME: &str = "metaclaw";
const PROVIDER: &str = "custom:metaclaw";

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

    fn restart_command(&self, _env: &Env) -> Option<Vec<String>> {
        Some(vec!["hermes".into(), "gateway".into(), "restart".into()])
    }
}
