use std::path::PathBuf;

/// Everything the store can fail with. Errors about the file itself name its path.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the directory for the database {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the database file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a SQLite database or is corrupted; it was left untouched — move it aside to start fresh"
    )]
    NotADatabase {
        path: PathBuf,
        #[source]
        source: Option<rusqlite::Error>,
    },
    #[error(
        "{path} has schema version {found}, newer than this MetaClaw understands ({known}); upgrade MetaClaw"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error(
        "{path} has schema version {found} but {known} is needed; start MetaClaw once to upgrade it"
    )]
    NeedsMigration {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("cannot upgrade {path} to schema version {version}: {source}")]
    Migration {
        path: PathBuf,
        version: i64,
        source: rusqlite::Error,
    },
    #[error("integrity check failed on {path}: {details}")]
    Integrity { path: PathBuf, details: String },
    /// A row the caller asked to write is malformed (checked before writing).
    #[error("invalid {what}: {detail}")]
    Invalid { what: &'static str, detail: String },
    /// A stored request or reply that cannot be rebuilt: it or one of its parts is damaged.
    #[error("the stored request or reply of turn {turn} cannot be read: {detail}")]
    BadBody { turn: i64, detail: String },
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}
