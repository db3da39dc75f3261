//! The machine as adapters see it: the home directory, `PATH`, a few environment
//! variables, and a command runner — all injectable so tests run against a fake home with
//! fake agent binaries.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a command printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// `None` when it was killed (timeout) or ended by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

impl CommandOutput {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs agent commands (restarts, helper CLIs).
pub trait Runner: Send + Sync {
    fn run(&self, argv: &[String], timeout: Duration) -> std::io::Result<CommandOutput>;
}

/// Runs real processes, killing one that outlives its timeout.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemRunner;

/// How often a running command is checked; restarts take seconds, so 50 ms costs nothing.
const POLL: Duration = Duration::from_millis(50);

impl Runner for SystemRunner {
    fn run(&self, argv: &[String], timeout: Duration) -> std::io::Result<CommandOutput> {
        let Some((program, args)) = argv.split_first() else {
            return Err(std::io::Error::other("empty command"));
        };
        let mut command = Command::new(program);
        without_metaclaw_variables(&mut command);
        let mut child = command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let deadline = Instant::now() + timeout;
        let mut timed_out = false;
        loop {
            if child.try_wait()?.is_some() {
                break;
            }
            if Instant::now() >= deadline {
                timed_out = true;
                let _ = child.kill();
                break;
            }
            std::thread::sleep(POLL);
        }
        let out = child.wait_with_output()?;
        Ok(CommandOutput {
            code: if timed_out { None } else { out.status.code() },
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            timed_out,
        })
    }
}

/// Removes MetaClaw's own variables (`METACLAW_…`, some of which hold keys) from what a
/// program MetaClaw starts inherits: agents and their tools never need them.
pub fn without_metaclaw_variables(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("METACLAW_") {
            command.env_remove(name);
        }
    }
}

/// The environment adapters work in.
pub struct Env {
    /// The user's home directory (`~`).
    pub home: PathBuf,
    /// `PATH`'s directories, in order.
    pub path: Vec<PathBuf>,
    /// Variables adapters consult (`HERMES_HOME`, …); only those, so tests are hermetic.
    pub vars: HashMap<String, String>,
    pub runner: Box<dyn Runner>,
}

impl Env {
    /// The real machine: `$HOME`, `$PATH`, the variables adapters read, real processes.
    pub fn system() -> Option<Env> {
        let home = std::env::var_os("HOME").map(PathBuf::from)?;
        let path = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        let vars = [
            "HERMES_HOME",
            "XDG_CONFIG_HOME",
            "COPAW_WORKING_DIR",
            "COPAW_SECRET_DIR",
            "OPENCLAW_CONFIG_PATH",
            "OPENCLAW_STATE_DIR",
            "OPENCLAW_HOME",
            "IRONCLAW_BASE_DIR",
        ]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_owned(), v)))
        .collect();
        Some(Env {
            home,
            path,
            vars,
            runner: Box::new(SystemRunner),
        })
    }

    /// `name` on `PATH`, as an executable file.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        self.path
            .iter()
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
    }

    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// `~/rest`.
    pub fn home_path(&self, rest: &str) -> PathBuf {
        self.home.join(rest)
    }
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}
