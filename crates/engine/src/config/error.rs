//! Errors from reading and editing the config; each names the file and the key.

use std::path::PathBuf;

use crate::secrets::SecretError;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// YAML syntax errors and wrong types; the parser's message names the dotted key and line.
    #[error("invalid config {}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("invalid config {}: {key}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        key: String,
        message: String,
    },
    #[error("unknown config key `{key}`{}", suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    UnknownKey {
        key: String,
        suggestion: Option<String>,
    },
    #[error("`{key}` is a section; use one of its keys: {}", children.join(", "))]
    Section { key: String, children: Vec<String> },
    #[error(transparent)]
    Secret(#[from] SecretError),
}
