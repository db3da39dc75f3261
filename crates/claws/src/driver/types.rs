//! What the driver's operations take and return: the options they run with and the
//! results of preview, connect, disconnect and status.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::secrets::mask;
use crate::doc::{self, Doc, EditError, Format};
use crate::target::{Endpoint, Mode, Protocol};

/// Opens a document; [`doc::open`] unless a caller brings its own format (tests).
pub type Opener = fn(Format, &str) -> Result<Box<dyn Doc>, EditError>;

/// How the driver runs; [`Options::default`] is what MetaClaw uses.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub open: Opener,
    /// A reload-style command (`… reload`, `… config apply`).
    pub command_timeout: Duration,
    /// A command that restarts the agent (its argv mentions `restart`); services can take
    /// a while to stop and come back.
    pub restart_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            open: doc::open,
            command_timeout: Duration::from_secs(15),
            restart_timeout: Duration::from_secs(90),
        }
    }
}

/// One key whose value changes, secrets masked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The key path, dotted (`models.providers.metaclaw`).
    pub key: String,
    pub old: Option<Value>,
    pub new: Option<Value>,
}

/// What `connect` would do, without doing it.
#[derive(Debug, Clone, Serialize)]
pub struct Preview {
    pub agent: String,
    /// `None` for an agent without a config file (`none`).
    pub file: Option<PathBuf>,
    /// The file does not exist and would be created.
    pub creates: bool,
    /// Nothing would change: the agent already points at the target.
    pub already_connected: bool,
    pub changes: Vec<Change>,
    pub restart_command: Option<Vec<String>>,
    pub notes: Vec<String>,
}

/// How the agent was (or was not) told to reload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Restart {
    /// Nothing changed, so nothing to reload.
    NotNeeded,
    /// The adapter has no restart command (the agent reloads by itself or on next start).
    NoCommand,
    /// The command's program is not on `PATH`.
    ProgramMissing {
        program: String,
    },
    Done {
        command: String,
    },
    Failed {
        command: String,
        code: Option<i32>,
        detail: String,
    },
    TimedOut {
        command: String,
        after_secs: u64,
    },
}

impl Restart {
    /// The restart's problem in words, for the result's warnings.
    pub fn warning(&self) -> Option<String> {
        match self {
            Restart::NotNeeded | Restart::NoCommand | Restart::Done { .. } => None,
            Restart::ProgramMissing { program } => Some(format!(
                "`{program}` is not on PATH, so the agent was not restarted: restart it yourself to load the new config"
            )),
            Restart::Failed {
                command,
                code,
                detail,
            } => Some(format!(
                "`{command}` failed ({}){}: restart the agent yourself to load the new config",
                code.map_or_else(|| "killed".to_owned(), |c| format!("exit {c}")),
                if detail.is_empty() {
                    String::new()
                } else {
                    format!(": {detail}")
                }
            )),
            Restart::TimedOut {
                command,
                after_secs,
            } => Some(format!(
                "`{command}` did not finish within {after_secs} s and was stopped: check the agent is running"
            )),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Connected {
    pub agent: String,
    pub file: Option<PathBuf>,
    /// Whether the file was written (false: already connected, nothing touched).
    pub changed: bool,
    /// The file did not exist and was created.
    pub created: bool,
    pub changes: Vec<Change>,
    /// Where the original is kept.
    pub backup: Option<PathBuf>,
    pub restart: Restart,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

/// What disconnect did to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Reverted {
    /// Unchanged since MetaClaw wrote it: the original bytes are back.
    Restored,
    /// MetaClaw created it: it is gone again.
    Deleted,
    /// The user changed it since: MetaClaw's keys are back to their original values,
    /// the user's other changes stay.
    KeysReverted { keys: Vec<String> },
    /// Already as it was before MetaClaw (or already gone): nothing written.
    Unchanged,
}

#[derive(Debug, Clone, Serialize)]
pub struct RevertedFile {
    pub path: PathBuf,
    #[serde(flatten)]
    pub action: Reverted,
}

#[derive(Debug, Clone, Serialize)]
pub struct Disconnected {
    pub agent: String,
    pub files: Vec<RevertedFile>,
    pub changed: bool,
    pub restart: Restart,
    pub warnings: Vec<String>,
}

/// Where an agent's config points, key masked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndpointView {
    pub protocol: Protocol,
    pub base: String,
    pub api_key: String,
    pub model: String,
}

impl From<&Endpoint> for EndpointView {
    fn from(e: &Endpoint) -> Self {
        EndpointView {
            protocol: e.protocol,
            base: e.base.clone(),
            api_key: mask(&e.api_key),
            model: e.model.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub agent: String,
    /// How the agent reaches MetaClaw once connected.
    pub mode: Mode,
    /// The agent's binary is on `PATH` or its config exists.
    pub installed: bool,
    pub binary: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub config_exists: bool,
    /// MetaClaw holds a backup (it connected the agent and has not disconnected it).
    pub backed_up: bool,
    /// The config points at the base MetaClaw wrote (or, when the adapter cannot read the
    /// config back, a backup exists); in plugin mode, it holds MetaClaw's plugin entries.
    pub connected: bool,
    /// Where the config points now.
    pub points_at: Option<EndpointView>,
    /// Something that kept status from being read fully (a corrupt config or manifest).
    pub problem: Option<String>,
    pub notes: Vec<String>,
}
