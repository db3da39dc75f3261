//! The `git` command, run in the team clone. The command rather than a git library: it uses
//! the user's own credentials as they already work in a terminal (SSH agent, credential
//! helpers, `insteadOf` rewrites), which a library would have to reimplement, and every
//! developer machine has it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::TeamError;

pub struct Git {
    pub dir: PathBuf,
}

impl Git {
    /// Runs `git ARGS` in the clone; its trimmed stdout, or its stderr as the error. Never
    /// prompts (a sync runs in the background): missing credentials fail at once.
    pub fn run(&self, args: &[&str]) -> Result<String, TeamError> {
        run_in(&self.dir, args)
    }

    /// Like `run`, but a non-zero exit is `Ok(None)` (for questions such as "does this
    /// branch exist").
    pub fn ask(&self, args: &[&str]) -> Result<Option<String>, TeamError> {
        match run_in(&self.dir, args) {
            Ok(out) => Ok(Some(out)),
            Err(TeamError::Git { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

pub fn run_in(dir: &Path, args: &[&str]) -> Result<String, TeamError> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_SSH_COMMAND", ssh_command())
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| TeamError::NoGit(e.to_string()))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned());
    }
    // git may repeat the remote's URL, with a password the user put in it: never shown.
    Err(TeamError::Git {
        command: args.first().copied().unwrap_or_default().to_owned(),
        message: super::without_userinfo(String::from_utf8_lossy(&out.stderr).trim()),
    })
}

/// SSH without questions: no password prompt, no host-key prompt (a background job cannot
/// answer; an unknown host fails instead of hanging).
fn ssh_command() -> String {
    std::env::var("GIT_SSH_COMMAND").unwrap_or_else(|_| "ssh -o BatchMode=yes".to_owned())
}
