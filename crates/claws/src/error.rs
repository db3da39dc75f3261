//! What connecting or disconnecting an agent can fail with, in words a user can act on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ClawError {
    #[error(
        "unknown agent `{0}`: choose openclaw, copaw, ironclaw, picoclaw, zeroclaw, nanoclaw, nemoclaw, hermes, claude-code or none"
    )]
    UnknownAgent(String),
    /// A plugin-mode agent asked to connect without the plugin's command.
    #[error(
        "{agent} runs MetaClaw as a plugin: connect it with `metaclaw agent connect {agent} --plugin`"
    )]
    PluginOnly { agent: String },
    /// The agent's config file does not exist and the adapter does not create one.
    #[error("{agent}'s config {} does not exist: is {agent} installed and set up? (run it once, then connect again)", path.display())]
    ConfigMissing { agent: String, path: PathBuf },
    #[error("{agent}'s config {} is empty: nothing was changed", path.display())]
    ConfigEmpty { agent: String, path: PathBuf },
    /// The file does not parse in its format; nothing was changed.
    #[error("{agent}'s config {} cannot be read ({detail}): nothing was changed; fix or remove the file and connect again", path.display())]
    ConfigCorrupt {
        agent: String,
        path: PathBuf,
        detail: String,
    },
    /// A value in the agent's config has a shape the adapter cannot edit safely (for
    /// example a string where an object is expected).
    #[error("{agent}'s config {}: {detail}; nothing was changed", path.display())]
    Unexpected {
        agent: String,
        path: PathBuf,
        detail: String,
    },
    #[error("cannot find where {agent} keeps its config: {hint}")]
    NotFound { agent: String, hint: String },
    #[error("{} changed since MetaClaw connected {agent} and MetaClaw's keys could not be restored: {detail}", path.display())]
    ChangedSince {
        agent: String,
        path: PathBuf,
        detail: String,
    },
    /// The connection cannot be tested from the config (what was read is said in `detail`).
    #[error("cannot test {agent}'s connection: {detail}")]
    CannotCheck { agent: String, detail: String },
    #[error("{agent} is not connected (no backup in {})", path.display())]
    NotConnected { agent: String, path: PathBuf },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("backup {}: {detail}", path.display())]
    Backup { path: PathBuf, detail: String },
}

impl ClawError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ClawError::Io {
            path: path.into(),
            source,
        }
    }
}
