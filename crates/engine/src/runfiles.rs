//! Files under `$METACLAW_HOME/run/` that let the CLI find the running engine (pid, port,
//! admin token) and keep a second engine from starting (the instance lock).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::paths::{Paths, set_mode, write_private_file};
use crate::secrets::{Secret, random_token};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(
        "MetaClaw is already running (PID {pid}); use `metaclaw status` to inspect it or `metaclaw stop` to stop it"
    )]
    AlreadyRunning { pid: u32 },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_owned(),
        source,
    }
}

/// What a running engine published about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    pub pid: u32,
    pub port: Option<u16>,
    pub admin_token: Option<Secret>,
}

impl RunInfo {
    /// Writes this process's pid, its port and the admin token (each atomically, 0600): a
    /// fresh one, or `keep` (an in-place restart, so an open dashboard stays signed in).
    pub fn publish(paths: &Paths, port: u16, keep: Option<&str>) -> Result<Self, RunError> {
        ensure_run_dir(paths)?;
        let token = Secret::new(
            keep.map(str::to_owned)
                .unwrap_or_else(|| random_token("mca-")),
        );
        write_private_file(&paths.admin_token_file, token.expose().as_bytes())
            .map_err(io_error(&paths.admin_token_file))?;
        write_private_file(&paths.port_file, port.to_string().as_bytes())
            .map_err(io_error(&paths.port_file))?;
        // The pid file last: its presence means the other two are complete.
        let pid = std::process::id();
        write_private_file(&paths.pid_file, pid.to_string().as_bytes())
            .map_err(io_error(&paths.pid_file))?;
        Ok(Self {
            pid,
            port: Some(port),
            admin_token: Some(token),
        })
    }

    /// `None` when no engine published a pid. A pid file with invalid contents is removed.
    /// Says nothing about liveness: see [`RunInfo::is_alive`].
    pub fn read(paths: &Paths) -> Result<Option<Self>, RunError> {
        let Some(text) = read_optional(&paths.pid_file)? else {
            return Ok(None);
        };
        let Some(pid) = parse_pid(&text) else {
            remove_optional(&paths.pid_file)?;
            return Ok(None);
        };
        let port = read_optional(&paths.port_file)?.and_then(|t| t.trim().parse().ok());
        let admin_token = read_optional(&paths.admin_token_file)?
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .map(Secret::new);
        Ok(Some(Self {
            pid,
            port,
            admin_token,
        }))
    }

    pub fn is_alive(&self) -> bool {
        pid_alive(self.pid)
    }
}

/// Removes the published files if they still name `pid` (a newer engine may have replaced
/// them); true if they did.
pub fn clear_if_owned(paths: &Paths, pid: u32) -> Result<bool, RunError> {
    let owned = read_optional(&paths.pid_file)?.and_then(|t| parse_pid(&t)) == Some(pid);
    if owned {
        for path in [&paths.pid_file, &paths.port_file, &paths.admin_token_file] {
            remove_optional(path)?;
        }
    }
    Ok(owned)
}

/// Held for the lifetime of the engine; released (file removed) on drop.
#[derive(Debug)]
pub struct InstanceLock {
    path: PathBuf,
    pid: u32,
}

impl InstanceLock {
    /// Takes `run/lock`, clearing it first if its holder is gone. Fails with
    /// [`RunError::AlreadyRunning`] naming the holder when it is alive.
    pub fn acquire(paths: &Paths) -> Result<Self, RunError> {
        ensure_run_dir(paths)?;
        let pid = std::process::id();
        let path = paths.lock_file.clone();
        // Two rounds: a stale lock is removed in the first and taken in the second.
        for _ in 0..2 {
            match create_lock(&path, pid) {
                Ok(()) => return Ok(Self { path, pid }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_error(&path)(e)),
            }
            match read_optional(&path)?.and_then(|t| parse_pid(&t)) {
                Some(holder) if pid_alive(holder) => {
                    return Err(RunError::AlreadyRunning { pid: holder });
                }
                // Dead or unreadable holder. Two engines clearing the same stale lock at the
                // same instant could both proceed; starts are user-driven, so that is accepted.
                _ => remove_optional(&path)?,
            }
        }
        Err(io_error(&path)(io::Error::other(
            "the instance lock keeps reappearing; another start is in progress",
        )))
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }
}

impl Drop for InstanceLock {
    fn drop(&mut self) {
        let ours = fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| parse_pid(&t))
            == Some(self.pid);
        if ours {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Creates the lock already holding the pid: written to a temporary file, then hard-linked
/// into place, which fails if the lock exists. Readers never see an empty lock, which they
/// would otherwise have to treat as stale.
fn create_lock(path: &Path, pid: u32) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".lock.{pid}.tmp"));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(pid.to_string().as_bytes())?;
        f.sync_all()?;
        fs::hard_link(&tmp, path)
    })();
    let _ = fs::remove_file(&tmp);
    result
}

fn ensure_run_dir(paths: &Paths) -> Result<(), RunError> {
    fs::create_dir_all(&paths.run).map_err(io_error(&paths.run))?;
    set_mode(&paths.run, 0o700).map_err(io_error(&paths.run))
}

fn parse_pid(text: &str) -> Option<u32> {
    text.trim().parse().ok().filter(|p| *p > 0)
}

fn read_optional(path: &Path) -> Result<Option<String>, RunError> {
    match fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path)(e)),
    }
}

fn remove_optional(path: &Path) -> Result<(), RunError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error(path)(e)),
        _ => Ok(()),
    }
}

/// Whether `pid` is a live MetaClaw process. On Linux the process must exist, not be a
/// zombie, and have `metaclaw` in its executable path or command line, so a recycled pid is
/// not mistaken for the engine (and never signalled).
#[cfg(target_os = "linux")]
pub fn pid_alive(pid: u32) -> bool {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let Ok(stat) = fs::read_to_string(proc.join("stat")) else {
        return false;
    };
    // The state follows the parenthesised command name, which may itself contain ") ".
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    if matches!(state, Some('Z' | 'X')) {
        return false;
    }
    let exe = fs::read_link(proc.join("exe")).ok();
    let cmdline = fs::read(proc.join("cmdline")).ok();
    if exe.is_none() && cmdline.is_none() {
        // Another user's process: it exists, but its identity cannot be checked.
        return true;
    }
    let named = |bytes: &[u8]| String::from_utf8_lossy(bytes).contains("metaclaw");
    exe.is_some_and(|p| named(p.as_os_str().as_encoded_bytes()))
        || cmdline.is_some_and(|c| named(&c))
}

/// Without `/proc`: signal 0 (permission denied still means the process exists).
#[cfg(all(unix, not(target_os = "linux")))]
pub fn pid_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// No cheap, dependency-free check here: assume alive, so a lock is never stolen from a
/// running engine (a stale one is removed with `metaclaw stop`).
#[cfg(not(unix))]
pub fn pid_alive(_pid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn home() -> Result<(tempfile::TempDir, Paths), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let paths = Paths::new(dir.path())?;
        Ok((dir, paths))
    }

    /// The pid of a process that has exited and been reaped.
    fn dead_pid() -> Result<u32, Box<dyn std::error::Error>> {
        let mut child = std::process::Command::new("true").spawn()?;
        let pid = child.id();
        child.wait()?;
        Ok(pid)
    }

    #[test]
    fn publish_read_and_clear() -> TestResult {
        let (_dir, paths) = home()?;
        assert_eq!(RunInfo::read(&paths)?, None);
        let published = RunInfo::publish(&paths, 30123, None)?;
        let read = RunInfo::read(&paths)?;
        assert_eq!(read.as_ref(), Some(&published));
        assert_eq!(published.pid, std::process::id());
        assert!(
            published.is_alive(),
            "the test binary's name contains metaclaw"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&paths.admin_token_file)?.permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(!clear_if_owned(&paths, published.pid + 1)?);
        assert!(paths.pid_file.exists());
        assert!(clear_if_owned(&paths, published.pid)?);
        assert!(!paths.pid_file.exists() && !paths.admin_token_file.exists());
        Ok(())
    }

    #[test]
    fn invalid_pid_file_is_removed() -> TestResult {
        let (_dir, paths) = home()?;
        fs::create_dir_all(&paths.run)?;
        fs::write(&paths.pid_file, "not a pid")?;
        assert_eq!(RunInfo::read(&paths)?, None);
        assert!(!paths.pid_file.exists());
        Ok(())
    }

    #[test]
    fn second_instance_is_refused_with_the_holder_pid() -> TestResult {
        let (_dir, paths) = home()?;
        let lock = InstanceLock::acquire(&paths)?;
        let me = std::process::id();
        match InstanceLock::acquire(&paths) {
            Err(RunError::AlreadyRunning { pid }) => assert_eq!(pid, me),
            other => return Err(format!("expected AlreadyRunning, got {other:?}").into()),
        }
        let msg = RunError::AlreadyRunning { pid: me }.to_string();
        assert!(msg.contains(&format!("PID {me}")), "{msg}");
        drop(lock);
        assert!(!paths.lock_file.exists());
        let again = InstanceLock::acquire(&paths)?;
        assert_eq!(again.pid(), me);
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn stale_or_garbled_lock_is_cleared() -> TestResult {
        let (_dir, paths) = home()?;
        fs::create_dir_all(&paths.run)?;
        let dead = dead_pid()?;
        assert!(!pid_alive(dead));
        fs::write(&paths.lock_file, dead.to_string())?;
        let lock = InstanceLock::acquire(&paths)?;
        assert_eq!(
            fs::read_to_string(&paths.lock_file)?,
            std::process::id().to_string()
        );
        drop(lock);
        fs::write(&paths.lock_file, "garbage")?;
        InstanceLock::acquire(&paths)?;
        Ok(())
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_process_that_is_not_metaclaw_does_not_count() -> TestResult {
        let mut child = std::process::Command::new("sleep").arg("30").spawn()?;
        let alive = pid_alive(child.id());
        child.kill()?;
        child.wait()?;
        assert!(!alive);
        Ok(())
    }
}
