//! `ironclaw`: `~/.ironclaw/.env`, the `LLM_*` variables of its OpenAI-compatible
//! backend; every other line of the file stays as written.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct IronClaw;

const BACKEND: &str = "openai_compatible";

fn text(doc: &dyn Doc, key: &str) -> Option<String> {
    match doc.get(&[key])? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

impl Adapter for IronClaw {
    fn name(&self) -> &'static str {
        "ironclaw"
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn binary(&self) -> Option<&'static str> {
        Some("ironclaw")
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(env.home_path(".ironclaw/.env")))
    }

    fn format(&self) -> Format {
        Format::Dotenv
    }

    fn edits(&self, _doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        Ok(vec![
            Edit::set(&["LLM_BACKEND"], json!(BACKEND)),
            Edit::set(&["LLM_BASE_URL"], json!(target.openai_base)),
            Edit::set(&["LLM_MODEL"], json!(target.model)),
            Edit::set(&["LLM_API_KEY"], json!(target.api_key)),
        ])
    }

    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        if text(doc, "LLM_BACKEND")? != BACKEND {
            return None;
        }
        Some(Endpoint {
            protocol: Protocol::OpenAi,
            base: text(doc, "LLM_BASE_URL")?,
            api_key: text(doc, "LLM_API_KEY").unwrap_or_default(),
            model: text(doc, "LLM_MODEL")?,
        })
    }

    fn restart_command(&self, _env: &Env) -> Option<Vec<String>> {
        Some(vec!["ironclaw".into(), "service".into(), "restart".into()])
    }
}
