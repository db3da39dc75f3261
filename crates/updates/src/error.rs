use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error("cannot read the apt source {path}: {why}")]
    Source { path: PathBuf, why: String },
    #[error("cannot fetch {url}: {why}")]
    Fetch { url: String, why: String },
    #[error("{0}")]
    Verify(String),
    #[error("the repository's index is not usable: {0}")]
    Index(String),
    #[error("the version manifest at {url} is not usable: {why}")]
    Manifest { url: String, why: String },
}
