use std::path::PathBuf;

/// Everything that can go wrong loading, running, importing or downloading a model.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the model in {dir} has no {file}")]
    MissingFile { dir: PathBuf, file: String },
    #[error("{file} is not usable: {reason}")]
    InvalidModel { file: PathBuf, reason: String },
    #[error("{path} is neither a model folder nor a zip archive: {reason}")]
    NotAnArchive { path: PathBuf, reason: String },
    #[error(
        "{0:?} is not a valid model name (letters, digits, '.', '-' and '_'; not starting with '.')"
    )]
    InvalidName(String),
    #[error("tokenizing failed: {0}")]
    Tokenize(String),
    #[error("downloading {file} from {url} failed: {reason}; nothing was installed")]
    Download {
        file: String,
        url: String,
        reason: String,
    },
    #[error(
        "{file} does not match its pinned checksum (expected {expected}, got {actual}); nothing was installed"
    )]
    Checksum {
        file: String,
        expected: String,
        actual: String,
    },
}

pub type Result<T, E = EmbedError> = std::result::Result<T, E>;

/// Attaches the path to an I/O error, so every message names the file.
pub(crate) trait IoContext<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|source| EmbedError::Io {
            path: path.into(),
            source,
        })
    }
}

pub(crate) fn invalid(file: impl Into<PathBuf>, reason: impl Into<String>) -> EmbedError {
    EmbedError::InvalidModel {
        file: file.into(),
        reason: reason.into(),
    }
}
