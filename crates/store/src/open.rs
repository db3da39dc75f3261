//! Opening the database: file checks, connection settings, migrations.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use crate::SCHEMA_VERSION;
use crate::error::StoreError;
use crate::migrations::MIGRATIONS;

/// The smallest page SQLite writes: a non-empty file shorter than this is not a database.
const MIN_DATABASE_BYTES: u64 = 512;
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// One connection to `metaclaw.db`.
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database for reading and writing and brings its schema
    /// up to date. Turns stored before schema v9 stay readable as they are, converted later by
    /// [`Store::convert_turns`] (the engine's recorder does it between writes: a database of
    /// gigabytes takes a minute or more, which must not hold up a start). A file that is not
    /// SQLite, or whose schema is newer than this binary, is refused and left untouched.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        check_header(path, false)?;
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Refuse a damaged file or a newer schema before changing anything in the file.
        let found = probe(&conn, path)?;
        if found > SCHEMA_VERSION {
            return Err(too_new(path, found));
        }
        if found == 0 {
            // Only a file without tables takes this; older databases switch at their first
            // compaction (see `vacuum`). Free pages then go back a few at a time.
            conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
        }
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
            .map_err(|e| classify(path, e))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrate(&mut conn, path)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens an existing, up-to-date database for reading only (status, CLI). Turns whose
    /// conversion to the v9 layout is still pending read back all the same.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        check_header(path, true)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let found = probe(&conn, path)?;
        if found > SCHEMA_VERSION {
            return Err(too_new(path, found));
        }
        if found < SCHEMA_VERSION {
            return Err(StoreError::NeedsMigration {
                path: path.to_path_buf(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The database file this store was opened on.
    /// The connection, for crates that keep their own queries on tables this crate's
    /// migrations create (memory). Schema changes still belong in this crate.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Rejects a path that cannot be a database before SQLite touches it; an empty or missing file
/// is a new database (unless `must_exist`).
///
/// Only the file's metadata is read here, never its bytes: closing any descriptor of the file
/// drops every POSIX lock this process holds on it (fcntl semantics), including the shared
/// lock SQLite's open connections keep. Without that lock another process's SQLite (a user's
/// `sqlite3 metaclaw.db`) believes it is the last connection when it closes, checkpoints and
/// deletes the `-wal`/`-shm` files under the running engine. SQLite itself reads page 1 and
/// refuses a file without its header (`probe`), through descriptors it keeps open.
fn check_header(path: &Path, must_exist: bool) -> Result<(), StoreError> {
    let read_err = |source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(read_err(std::io::Error::new(
            ErrorKind::IsADirectory,
            "a directory, not a database file",
        ))),
        // Non-empty files are checked by SQLite's own first read (`probe`), which refuses
        // anything without its header before anything is written.
        Ok(meta) if meta.len() > 0 && meta.len() < MIN_DATABASE_BYTES => {
            Err(StoreError::NotADatabase {
                path: path.to_path_buf(),
                source: None,
            })
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound && !must_exist => Ok(()),
        Err(e) => Err(read_err(e)),
    }
}

fn user_version(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(|e| classify(path, e))
}

/// Reads the schema table so a damaged first page is caught before anything is written.
fn probe(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    conn.query_row("SELECT COUNT(*) FROM sqlite_schema", [], |_| Ok(()))
        .map_err(|e| classify(path, e))?;
    user_version(conn, path)
}

/// Applies pending migrations, one transaction each. The write lock is taken before the
/// version is re-read, so two processes opening at once cannot apply one migration twice.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let found = user_version(&tx, path)?;
        if found > SCHEMA_VERSION {
            return Err(too_new(path, found));
        }
        let Some(sql) = usize::try_from(found).ok().and_then(|i| MIGRATIONS.get(i)) else {
            return Ok(());
        };
        let version = found + 1;
        let failed = |source| StoreError::Migration {
            path: path.to_path_buf(),
            version,
            source,
        };
        tx.execute_batch(sql).map_err(failed)?;
        tx.pragma_update(None, "user_version", version)
            .map_err(failed)?;
        tx.commit().map_err(failed)?;
        tracing::info!(path = %path.display(), version, "database schema upgraded");
    }
}

fn too_new(path: &Path, found: i64) -> StoreError {
    StoreError::TooNew {
        path: path.to_path_buf(),
        found,
        known: SCHEMA_VERSION,
    }
}

/// Names the file when SQLite says it is not a database or is damaged.
fn classify(path: &Path, err: rusqlite::Error) -> StoreError {
    match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::NotADatabase {
            path: path.to_path_buf(),
            source: Some(err),
        },
        _ => StoreError::Sqlite(err),
    }
}
