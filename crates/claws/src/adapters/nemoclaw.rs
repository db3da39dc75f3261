//! `nemoclaw`: `~/.nemoclaw/config.json` gets a custom endpoint. Only the endpoint keys are
//! set (the Python version overwrote the whole file). The proxy key itself lives in an
//! OpenShell provider, which the user creates (see `notes`), so it never enters this file.

use std::path::PathBuf;

use serde_json::Value;

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct NemoClaw;

fn text(doc: &dyn Doc, path: &[&str]) -> Option<String> {
    match doc.get(path)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

impl Adapter for NemoClaw {
    fn name(&self) -> &'static str {
        "nemoclaw"
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn binary(&self) -> Option<&'static str> {
        Some("nemoclaw")
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(env.home_path(".nemoclaw/config.json")))
    }

    fn format(&self) -> Format {
        Format::Json5
    }

    fn edits(&self, _doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        Ok(vec![
            Edit::set(&["endpointType"], "custom".into()),
            Edit::set(&["endpointUrl"], target.openai_base.clone().into()),
            Edit::set(&["model"], target.model.clone().into()),
            Edit::set(&["profile"], "ncp".into()),
            Edit::set(&["credentialEnv"], "OPENAI_API_KEY".into()),
        ])
    }

    /// The key is held by OpenShell, not this file, so it reads back empty.
    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        Some(Endpoint {
            protocol: Protocol::OpenAi,
            base: text(doc, &["endpointUrl"])?,
            api_key: String::new(),
            model: text(doc, &["model"])?,
        })
    }

    /// NemoClaw runs OpenClaw inside its sandbox; a failed restart is not fatal.
    fn restart_command(&self, _env: &Env) -> Option<Vec<String>> {
        Some(vec!["openclaw".into(), "gateway".into(), "restart".into()])
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "NemoClaw reads its key from an OpenShell provider, which MetaClaw does not \
             create (it would put the key on a command line). Run once: \
             `openshell provider create --name metaclaw --type openai \
             --credential OPENAI_API_KEY=<your MetaClaw proxy key> \
             --config OPENAI_BASE_URL=http://127.0.0.1:<port>/v1` \
             (if it already exists: `openshell provider update metaclaw --credential \
             OPENAI_API_KEY=<your MetaClaw proxy key> --config \
             OPENAI_BASE_URL=http://127.0.0.1:<port>/v1`), then \
             `openshell inference set --provider metaclaw --model <model id>`."
                .to_owned(),
        ]
    }
}
