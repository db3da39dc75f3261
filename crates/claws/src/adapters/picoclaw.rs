//! `picoclaw`: `~/.picoclaw/config.json` keeps its models in `model_list`; MetaClaw upserts
//! the entry named `metaclaw` (every other entry stays as it is) and makes it the default.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct PicoClaw;

const NAME: &str = "metaclaw";
const LIST: [&str; 1] = ["model_list"];
const DEFAULT: [&str; 3] = ["agents", "defaults", "model_name"];

fn is_ours(item: &Value) -> bool {
    item.get("model_name").and_then(Value::as_str) == Some(NAME)
}

/// `model_list` with MetaClaw's entry replaced where it stands (keeping any extra fields
/// the user gave it, dropping later duplicates) or appended.
fn upserted(current: Option<Value>, target: &Target) -> Result<Vec<Value>, String> {
    let items = match current {
        None => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => return Err("`model_list` is not a list".into()),
    };
    let ours = |base: Option<&Value>| {
        let mut entry = match base {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        entry.insert("model_name".into(), NAME.into());
        entry.insert("model".into(), format!("openai/{}", target.model).into());
        entry.insert("api_key".into(), target.api_key.clone().into());
        entry.insert("api_base".into(), target.openai_base.clone().into());
        Value::Object(entry)
    };
    let mut out = Vec::with_capacity(items.len() + 1);
    let mut placed = false;
    for item in items {
        if !is_ours(&item) {
            out.push(item);
        } else if !placed {
            out.push(ours(Some(&item)));
            placed = true;
        }
    }
    if !placed {
        out.push(ours(None));
    }
    Ok(out)
}

impl Adapter for PicoClaw {
    fn name(&self) -> &'static str {
        "picoclaw"
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn binary(&self) -> Option<&'static str> {
        Some("picoclaw")
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(env.home_path(".picoclaw/config.json")))
    }

    fn format(&self) -> Format {
        Format::Json5
    }

    fn edits(&self, doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        let list = upserted(doc.get(&LIST), target)?;
        Ok(vec![
            Edit::set(&LIST, Value::Array(list)),
            Edit::set(&DEFAULT, NAME.into()),
        ])
    }

    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        let name = doc.get(&DEFAULT)?;
        let Some(Value::Array(items)) = doc.get(&LIST) else {
            return None;
        };
        let entry = items.iter().find(|i| i.get("model_name") == Some(&name))?;
        let field = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_owned);
        // `model` is `<protocol>/<model id>`; the id is what goes on the wire.
        let model = field("model")?;
        let (protocol, id) = model.split_once('/').unwrap_or(("openai", model.as_str()));
        Some(Endpoint {
            protocol: if protocol == "anthropic" {
                Protocol::Anthropic
            } else {
                Protocol::OpenAi
            },
            base: field("api_base")?,
            api_key: field("api_key").unwrap_or_default(),
            model: id.to_owned(),
        })
    }

    fn restart_command(&self, _env: &Env) -> Option<Vec<String>> {
        Some(vec!["picoclaw".into(), "gateway".into(), "restart".into()])
    }
}
