//! Layout of `$METACLAW_HOME` (default `~/.metaclaw`) and how private files in it are written.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Environment variable that relocates the whole home (tests, headless installs).
pub const HOME_ENV: &str = "METACLAW_HOME";

#[derive(Debug, thiserror::Error)]
pub enum PathsError {
    #[error("cannot find the home directory; set {HOME_ENV}")]
    NoHome,
    #[error("cannot resolve {path}: {source}")]
    Resolve { path: PathBuf, source: io::Error },
    #[error("cannot create {path}: {source}")]
    Create { path: PathBuf, source: io::Error },
}

/// Every file and directory MetaClaw keeps under its home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    pub home: PathBuf,
    pub config: PathBuf,
    pub db: PathBuf,
    pub skills: PathBuf,
    pub logs: PathBuf,
    pub run: PathBuf,
    pub pid_file: PathBuf,
    pub port_file: PathBuf,
    pub admin_token_file: PathBuf,
    pub lock_file: PathBuf,
    pub secrets_fallback_file: PathBuf,
}

impl Paths {
    /// `$METACLAW_HOME` if set and non-empty, else `~/.metaclaw`.
    pub fn from_env() -> Result<Self, PathsError> {
        match std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
            Some(home) => Self::new(PathBuf::from(home)),
            None => Self::new(default_home().ok_or(PathsError::NoHome)?),
        }
    }

    /// The layout under `home`, made absolute (relative to the current directory).
    pub fn new(home: impl Into<PathBuf>) -> Result<Self, PathsError> {
        let home = home.into();
        let home = std::path::absolute(&home).map_err(|source| PathsError::Resolve {
            path: home.clone(),
            source,
        })?;
        let run = home.join("run");
        Ok(Self {
            config: home.join("config.yaml"),
            db: home.join("metaclaw.db"),
            skills: home.join("skills"),
            logs: home.join("logs"),
            pid_file: run.join("metaclaw.pid"),
            port_file: run.join("port"),
            admin_token_file: run.join("admin_token"),
            lock_file: run.join("lock"),
            secrets_fallback_file: home.join("secrets.yaml"),
            run,
            home,
        })
    }

    /// Use another config file (`metaclaw start -c PATH`); everything else stays in the home.
    pub fn with_config_file(mut self, config: impl Into<PathBuf>) -> Self {
        self.config = config.into();
        self
    }

    /// True when this is the per-user default home rather than a relocated one.
    pub fn is_default_home(&self) -> bool {
        default_home().is_some_and(|d| std::path::absolute(d).is_ok_and(|d| d == self.home))
    }

    /// The desktop app's one-instance socket: it exists while the app runs.
    pub fn desktop_socket(&self) -> PathBuf {
        self.run.join("desktop.sock")
    }

    /// The local embedding models' store (`models/` itself holds tokenizers of served models).
    pub fn embedding_models(&self) -> PathBuf {
        self.home.join("models").join("embeddings")
    }

    /// Creates the home and its directories; the home (and so everything in it) is private to
    /// the user.
    pub fn ensure_dirs(&self) -> Result<(), PathsError> {
        for dir in [&self.home, &self.skills, &self.logs, &self.run] {
            fs::create_dir_all(dir).map_err(|source| PathsError::Create {
                path: dir.clone(),
                source,
            })?;
        }
        // The home holds transcripts (metaclaw.db) and logs: private to the user, like run/.
        for dir in [&self.home, &self.run] {
            set_mode(dir, 0o700).map_err(|source| PathsError::Create {
                path: dir.clone(),
                source,
            })?;
        }
        Ok(())
    }
}

fn default_home() -> Option<PathBuf> {
    std::env::home_dir()
        .filter(|h| !h.as_os_str().is_empty())
        .map(|h| h.join(".metaclaw"))
}

/// Writes `contents` so readers see either the old file or the new one, never a torn write
/// (`metaclaw_files::write_atomic`), readable by the owner only; creates the directory.
pub fn write_private_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    metaclaw_files::write_atomic(path, contents, Some(0o600))
}

pub(crate) fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_under_home() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let paths = Paths::new(dir.path())?;
        assert_eq!(paths.config, dir.path().join("config.yaml"));
        assert_eq!(paths.pid_file, dir.path().join("run/metaclaw.pid"));
        assert!(!paths.is_default_home());
        paths.ensure_dirs()?;
        assert!(paths.skills.is_dir() && paths.logs.is_dir());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for dir in [&paths.home, &paths.run] {
                assert_eq!(fs::metadata(dir)?.permissions().mode() & 0o777, 0o700);
            }
        }
        Ok(())
    }

    #[test]
    fn private_file_is_replaced_atomically_with_mode_0600() -> Result<(), Box<dyn std::error::Error>>
    {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("sub/file");
        write_private_file(&path, b"one")?;
        write_private_file(&path, b"two")?;
        assert_eq!(fs::read_to_string(&path)?, "two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&path)?.permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(fs::read_dir(dir.path().join("sub"))?.count(), 1);
        Ok(())
    }
}
