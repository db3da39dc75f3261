//! `ironclaw`: `~/.ironclaw/.env` (`$IRONCLAW_BASE_DIR/.env` when set), the `LLM_*`
//! variables of its OpenAI-compatible backend; every other line of the file stays as
//! written.
//!
//! Checked against IronClaw 0.24.0's source (`src/bootstrap.rs`, `src/config/llm.rs`), not
//! the running agent: a backend or model saved in IronClaw's settings database (its setup
//! wizard does) wins over `.env`, which the notes say.

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
        let base = match env.var("IRONCLAW_BASE_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => env.home_path(".ironclaw"),
        };
        Ok(Some(base.join(".env")))
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

    fn notes(&self) -> Vec<String> {
        vec![
            "a backend or model chosen in IronClaw's setup is kept in its settings database \
             and wins over `.env`: `ironclaw config reset llm_backend` and `ironclaw config \
             reset selected_model` let MetaClaw's settings apply"
                .to_owned(),
        ]
    }
}
