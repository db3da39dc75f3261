//! The config file as it was before setup touched it, put back when a later step fails, so
//! a failed setup leaves the file exactly as it found it.

use std::path::{Path, PathBuf};

use super::SetupError;
use crate::paths::write_private_file;

pub(super) struct Snapshot {
    path: PathBuf,
    /// `None`: there was no file.
    bytes: Option<Vec<u8>>,
}

impl Snapshot {
    pub(super) fn take(path: &Path) -> Result<Self, SetupError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(SetupError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        Ok(Self {
            path: path.to_owned(),
            bytes,
        })
    }

    /// Puts the file back; a failure here is logged, the caller reports the first error.
    pub(super) fn restore(&self) {
        let result = match &self.bytes {
            Some(b) => write_private_file(&self.path, b),
            None => match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        };
        if let Err(e) = result {
            tracing::error!(path = %self.path.display(), "cannot restore the config: {e}");
        }
    }
}
