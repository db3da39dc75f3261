//! Telling the agent to reload its config after a change, with what it prints on failure
//! cut short and its secrets masked.

use std::path::{Path, PathBuf};

use super::secrets::scrub;
use super::types::{Options, Restart};
use crate::adapter::Adapter;
use crate::env::Env;

/// Restarts the agent as connect does after a change, for a change the agent's config
/// reload may not cover (a plugin installed beside it).
pub fn reload(adapter: &dyn Adapter, env: &Env) -> Restart {
    restart(&Options::default(), adapter, env, &[])
}

/// `known`: secrets the agent may print when it fails (the key just written or just
/// removed); they are masked in what the result carries.
pub(super) fn restart(opts: &Options, adapter: &dyn Adapter, env: &Env, known: &[&str]) -> Restart {
    let Some(mut argv) = adapter.restart_command(env) else {
        return Restart::NoCommand;
    };
    let Some(program) = argv.first().cloned() else {
        return Restart::NoCommand;
    };
    let found = if Path::new(&program).is_absolute() {
        Some(PathBuf::from(&program)).filter(|p| p.is_file())
    } else {
        env.which(&program)
    };
    let Some(found) = found else {
        return Restart::ProgramMissing { program };
    };
    let command = argv.join(" ");
    // Judged on the command as the adapter wrote it, not on the directory it was found in.
    let timeout = if argv.iter().any(|a| a.contains("restart")) {
        opts.restart_timeout
    } else {
        opts.command_timeout
    };
    // The runner resolves argv[0] against the process's PATH, which may not be env's.
    argv[0] = found.to_string_lossy().into_owned();
    tracing::info!(agent = adapter.name(), %command, "reloading the agent");
    match env.runner.run(&argv, timeout) {
        Ok(out) if out.timed_out => Restart::TimedOut {
            command,
            after_secs: timeout.as_secs(),
        },
        Ok(out) if out.success() => Restart::Done { command },
        Ok(out) => Restart::Failed {
            command,
            code: out.code,
            detail: tail(
                if out.stderr.trim().is_empty() {
                    &out.stdout
                } else {
                    &out.stderr
                },
                known,
            ),
        },
        Err(e) => Restart::Failed {
            command,
            code: None,
            detail: e.to_string(),
        },
    }
}

/// The last line or so of a command's output, enough to say why it failed.
fn tail(s: &str, known: &[&str]) -> String {
    let line = s.trim().lines().last().unwrap_or_default().trim();
    let chars: Vec<char> = line.chars().collect();
    let start = chars.len().saturating_sub(300);
    scrub(&chars[start..].iter().collect::<String>(), known)
}
