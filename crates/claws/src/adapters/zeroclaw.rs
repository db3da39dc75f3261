//! `zeroclaw`: `~/.zeroclaw/config.toml`, four top-level keys (`provider`, `model`,
//! `api_key`, `base_url`). The TOML editor puts them before the first `[table]`, where
//! the old line patcher appended them into whichever table came last.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct ZeroClaw;

/// The provider name ZeroClaw gives any OpenAI-compatible endpoint.
const PROVIDER: &str = "openai-compatible";

fn text(doc: &dyn Doc, key: &str) -> Option<String> {
    match doc.get(&[key])? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

impl Adapter for ZeroClaw {
    fn name(&self) -> &'static str {
        "zeroclaw"
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn binary(&self) -> Option<&'static str> {
        Some("zeroclaw")
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(env.home_path(".zeroclaw/config.toml")))
    }

    fn format(&self) -> Format {
        Format::Toml
    }

    fn edits(&self, _doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        Ok(vec![
            Edit::set(&["provider"], json!(PROVIDER)),
            Edit::set(&["model"], json!(target.model)),
            Edit::set(&["api_key"], json!(target.api_key)),
            Edit::set(&["base_url"], json!(target.openai_base)),
        ])
    }

    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        if text(doc, "provider")? != PROVIDER {
            return None;
        }
        Some(Endpoint {
            protocol: Protocol::OpenAi,
            base: text(doc, "base_url")?,
            api_key: text(doc, "api_key").unwrap_or_default(),
            model: text(doc, "model")?,
        })
    }

    fn restart_command(&self, _env: &Env) -> Option<Vec<String>> {
        Some(vec!["zeroclaw".into(), "service".into(), "restart".into()])
    }
}
