//! `metaclaw setup`, shared with the setup window: the answers setup asks for, read from the
//! config as it is (so a re-run is an edit), written back key by key (so every setting it
//! does not ask about stays), the connection test, and bringing in an earlier Python
//! MetaClaw's config with its plaintext keys moved into the keychain.

mod answers;
mod apply;
mod connection;
mod import;
mod proxy_check;
mod snapshot;

use std::path::PathBuf;

pub use answers::{Answers, Current, current, validate};
pub use apply::{Applied, apply};
pub use connection::{connection_target, test_connection};
pub use import::{Imported, SecretMove, import_reference, migrate_own_secrets};
pub use proxy_check::{proxy_endpoint, verify_proxy};

/// The claws types setup hands on, so its callers need not depend on the claws crate.
pub use metaclaw_claws::{
    Change, Connected, Endpoint, Env, Restart, Status, Verified, VerifyError,
};

use crate::config::ConfigError;
use crate::secrets::SecretError;

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// An answer that cannot be written; `field` is the question (`provider`, `api_base`, …).
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Secret(#[from] SecretError),
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
}

#[cfg(test)]
mod tests;
