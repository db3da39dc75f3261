//! Fallback store where no keychain exists: `$METACLAW_HOME/secrets.yaml`, mode 0600.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::SecretError;
use crate::paths::write_private_file;

#[derive(Debug, Clone)]
pub(super) struct SecretFile {
    path: PathBuf,
}

impl SecretFile {
    pub(super) fn new(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        Ok(self.read()?.remove(account))
    }

    pub(super) fn set(&self, account: &str, value: &str) -> Result<(), SecretError> {
        let mut all = self.read()?;
        all.insert(account.to_owned(), value.to_owned());
        self.write(&all)
    }

    /// True when the account was present.
    pub(super) fn delete(&self, account: &str) -> Result<bool, SecretError> {
        let mut all = self.read()?;
        if all.remove(account).is_none() {
            return Ok(false);
        }
        self.write(&all)?;
        Ok(true)
    }

    fn read(&self) -> Result<BTreeMap<String, String>, SecretError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(self.error(e.to_string())),
        };
        if text.trim().is_empty() {
            return Ok(BTreeMap::new());
        }
        // The parser's message may quote the offending value, which could be a secret.
        serde_yaml_ng::from_str(&text).map_err(|e| {
            let at = e
                .location()
                .map(|l| format!(" (line {})", l.line()))
                .unwrap_or_default();
            self.error(format!("not a mapping of account names to strings{at}"))
        })
    }

    fn write(&self, all: &BTreeMap<String, String>) -> Result<(), SecretError> {
        let text = serde_yaml_ng::to_string(all).map_err(|e| self.error(e.to_string()))?;
        write_private_file(&self.path, text.as_bytes()).map_err(|e| self.error(e.to_string()))
    }

    fn error(&self, message: String) -> SecretError {
        SecretError::File {
            path: self.path.clone(),
            message,
        }
    }
}
