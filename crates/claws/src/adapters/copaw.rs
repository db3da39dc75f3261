//! `copaw`: `~/.copaw/config.json`, created when missing (CoPaw hot-reloads it); MetaClaw
//! becomes its default model.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct CoPaw;

const DEFAULT: [&str; 2] = ["models", "default"];

fn text(doc: &dyn Doc, path: &[&str]) -> Option<String> {
    match doc.get(path)? {
        Value::String(s) => Some(s),
        _ => None,
    }
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

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(env.home_path(".copaw/config.json")))
    }

    /// Plain JSON, which the JSON5 editor writes back as plain JSON.
    fn format(&self) -> Format {
        Format::Json5
    }

    fn creates_config(&self) -> bool {
        true
    }

    fn edits(&self, _doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        Ok(vec![Edit::set(
            &DEFAULT,
            json!({
                "provider": "openai_compatible",
                "model": target.model,
                "api_key": target.api_key,
                "base_url": target.openai_base,
            }),
        )])
    }

    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        let field = |k: &str| text(doc, &["models", "default", k]);
        Some(Endpoint {
            protocol: Protocol::OpenAi,
            base: field("base_url")?,
            api_key: field("api_key").unwrap_or_default(),
            model: field("model")?,
        })
    }

    fn restart_command(&self, _env: &Env) -> Option<Vec<String>> {
        Some(vec!["copaw".into(), "daemon".into(), "restart".into()])
    }
}
