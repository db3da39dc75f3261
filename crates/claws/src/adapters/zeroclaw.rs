//! `zeroclaw`: `~/.zeroclaw/config.toml`. ZeroClaw reaches an OpenAI-compatible endpoint
//! through `default_provider = "custom:<base>"` (it posts to `<base>/chat/completions`),
//! with `default_model` and `api_key` at the top level.
//!
//! The Python version wrote `provider`, `model` and `base_url` instead: ZeroClaw ignores
//! the first and last, and `model` is an alias of `default_model`, so a config holding
//! both no longer loads (duplicate field). Here the key the file already uses (name or
//! alias) is the one set, and the TOML editor keeps it before the first `[table]`.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct ZeroClaw;

/// ZeroClaw's prefix for an OpenAI-compatible endpoint given by URL.
const CUSTOM: &str = "custom:";
/// `(key, serde alias)`: ZeroClaw accepts either, but not both.
const PROVIDER: (&str, &str) = ("default_provider", "model_provider");
const MODEL: (&str, &str) = ("default_model", "model");

fn text(doc: &dyn Doc, key: &str) -> Option<String> {
    match doc.get(&[key])? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// The key to write: the canonical one unless the file uses only the alias.
fn key_in_use(doc: &dyn Doc, (key, alias): (&'static str, &'static str)) -> &'static str {
    if doc.get(&[key]).is_none() && doc.get(&[alias]).is_some() {
        alias
    } else {
        key
    }
}

fn either(doc: &dyn Doc, (key, alias): (&str, &str)) -> Option<String> {
    text(doc, key).or_else(|| text(doc, alias))
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

    fn edits(&self, doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        Ok(vec![
            Edit::set(
                &[key_in_use(doc, PROVIDER)],
                json!(format!("{CUSTOM}{}", target.openai_base)),
            ),
            Edit::set(&[key_in_use(doc, MODEL)], json!(target.model)),
            Edit::set(&["api_key"], json!(target.api_key)),
        ])
    }

    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        let provider = either(doc, PROVIDER)?;
        let base = provider.strip_prefix(CUSTOM)?;
        Some(Endpoint {
            protocol: Protocol::OpenAi,
            base: base.to_owned(),
            api_key: text(doc, "api_key").unwrap_or_default(),
            model: either(doc, MODEL)?,
        })
    }

    fn restart_command(&self, _env: &Env) -> Option<Vec<String>> {
        Some(vec!["zeroclaw".into(), "service".into(), "restart".into()])
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "ZeroClaw lets the environment override config.toml: if its service sets \
             ZEROCLAW_PROVIDER, ZEROCLAW_API_KEY or API_KEY, unset them so it uses MetaClaw."
                .to_owned(),
        ]
    }
}
