//! `hermes`: placeholder until its adapter lands.

use std::path::PathBuf;

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct Hermes;

impl Adapter for Hermes {
    fn name(&self) -> &'static str {
        "hermes"
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

    fn format(&self) -> Format {
        Format::Json5
    }

    fn edits(&self, _doc: &dyn Doc, _target: &Target) -> Result<Vec<Edit>, String> {
        Err("the hermes adapter is not built yet".into())
    }

    fn read_back(&self, _doc: &dyn Doc) -> Option<Endpoint> {
        None
    }
}
