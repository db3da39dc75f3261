//! What each agent's adapter says; the driver does the rest (backup, write, restart,
//! verify, revert) the same way for all of them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::packages::Package;
use crate::target::{Endpoint, Mode, Protocol, Target};

/// One change to a config document: set `path` to `value`, or remove it (`None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub path: Vec<String>,
    pub value: Option<Value>,
}

impl Edit {
    pub fn set(path: &[&str], value: Value) -> Edit {
        Edit {
            path: path.iter().map(|s| (*s).to_owned()).collect(),
            value: Some(value),
        }
    }

    pub fn remove(path: &[&str]) -> Edit {
        Edit {
            path: path.iter().map(|s| (*s).to_owned()).collect(),
            value: None,
        }
    }
}

/// One agent.
pub trait Adapter: Send + Sync {
    /// The `claw_type` name: `openclaw`, `copaw`, …
    fn name(&self) -> &'static str;

    /// The protocol the agent will speak to MetaClaw.
    fn protocol(&self) -> Protocol;

    /// Whether connecting points the agent at the proxy or installs MetaClaw as its plugin
    /// (then [`Self::edits`] use [`Target::plugin`], and [`Self::plugged_in`] says whether
    /// the config still holds it).
    fn mode(&self) -> Mode {
        Mode::Proxy
    }

    /// The package MetaClaw writes under its home for the agent to load (plugin mode
    /// only): connect brings it up to date before pointing the config at it.
    fn package(&self) -> Option<&'static Package> {
        None
    }

    /// Where the agent looks for the package when its config cannot say (Hermes scans
    /// `$HERMES_HOME/plugins/`): connect links that path to the given folder of the package,
    /// disconnect removes the link.
    fn package_link(&self, env: &Env) -> Option<(PathBuf, &'static str)> {
        let _ = env;
        None
    }

    /// Whether `doc` holds MetaClaw's plugin entries (plugin mode only).
    fn plugged_in(&self, doc: &dyn Doc) -> bool {
        let _ = doc;
        false
    }

    /// The agent's command, looked up on `PATH` for detection and restarts.
    fn binary(&self) -> Option<&'static str>;

    /// The config file MetaClaw edits; `Err(NotFound)` when it cannot be located (nanoclaw
    /// searches several places), `Ok(None)` for `none`.
    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError>;

    fn format(&self) -> Format;

    /// Whether a missing config file is created (CoPaw hot-reloads one it finds) rather
    /// than reported.
    fn creates_config(&self) -> bool {
        false
    }

    /// The edits that point the agent at `target`, given its current config (for
    /// upserting into lists the agent owns). Pure: reads `doc`, changes nothing. Applying
    /// them to a document already pointed at `target` must change nothing (idempotence).
    fn edits(&self, doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String>;

    /// Where the config points now (base, key, model), when it can tell; used by `verify`
    /// (a request exactly as the agent would send it) and `status` (connected or not).
    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint>;

    /// The command that makes a running agent reload its config (argv, `argv[0]` being
    /// [`Self::binary`] or another tool); run only when a file changed.
    fn restart_command(&self, env: &Env) -> Option<Vec<String>> {
        let _ = env;
        None
    }

    /// Further files connect edits besides [`Self::config_file`], in the same format, for
    /// an agent that keeps its model in several (CoPaw: a provider registry and per-agent
    /// files): each path, and whether it is created when missing (otherwise a missing one
    /// is skipped). Disconnect reverts them like the main file.
    fn companion_files(&self, env: &Env) -> Result<Vec<(PathBuf, bool)>, ClawError> {
        let _ = env;
        Ok(Vec::new())
    }

    /// The edits for one companion file (as [`Self::edits`]); none leaves it alone.
    fn companion_edits(
        &self,
        path: &Path,
        doc: &dyn Doc,
        target: &Target,
    ) -> Result<Vec<Edit>, String> {
        let _ = (path, doc, target);
        Ok(Vec::new())
    }

    /// Where the agent points, resolved over its files the way the agent resolves it, when
    /// that takes more than [`Self::read_back`] on one file; `None`: use `read_back`.
    /// `Err`: a file cannot be read (said in words).
    fn resolve_endpoint(&self, env: &Env) -> Option<Result<Option<Endpoint>, String>> {
        let _ = env;
        None
    }

    /// Why the key read back cannot be used to test the connection (CoPaw encrypts its
    /// keys at rest); `None`: it can.
    fn unreadable_key(&self, key: &str) -> Option<String> {
        let _ = key;
        None
    }

    /// What the user should know that MetaClaw did not do itself (a manual step).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}
