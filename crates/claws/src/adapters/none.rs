//! `none`: no agent to edit; MetaClaw only says how to point a client at the proxy.

use std::path::PathBuf;

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct NoAgent;

impl Adapter for NoAgent {
    fn name(&self) -> &'static str {
        "none"
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn binary(&self) -> Option<&'static str> {
        None
    }

    fn config_file(&self, _env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(None)
    }

    /// Never used: there is no file.
    fn format(&self) -> Format {
        Format::Json5
    }

    fn edits(&self, _doc: &dyn Doc, _target: &Target) -> Result<Vec<Edit>, String> {
        Ok(Vec::new())
    }

    fn read_back(&self, _doc: &dyn Doc) -> Option<Endpoint> {
        None
    }

    /// The manual wiring. Bases only: the key is named, never printed, since notes end up
    /// on screens and in logs.
    fn notes(&self) -> Vec<String> {
        vec![
            "No agent is configured: point your client at MetaClaw yourself.".into(),
            "OpenAI-compatible clients: base URL http://127.0.0.1:<port>/v1 (the proxy port, 30000 by default), model id from `metaclaw config get llm.model_id` (else metaclaw-model).".into(),
            "Anthropic-style clients: ANTHROPIC_BASE_URL=http://127.0.0.1:<port> (no /v1).".into(),
            "API key: MetaClaw's proxy key, which is never printed: to type it into a client, set one you know with `metaclaw config set proxy.api_key` and restart MetaClaw.".into(),
        ]
    }
}
