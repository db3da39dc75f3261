//! Where OpenClaw 2026.9 keeps its config and whether its gateway runs as a service, as
//! OpenClaw itself decides (`src/config/paths.ts`, `src/config/state-dir.ts`,
//! `src/daemon/constants.ts`).

use std::path::{Path, PathBuf};

use crate::env::Env;

const CONFIG: &str = "openclaw.json";
/// Older names OpenClaw still reads when they are the ones that exist.
const LEGACY_CONFIG: &str = "clawdbot.json";
const STATE_DIR: &str = ".openclaw";
const LEGACY_STATE_DIR: &str = ".clawdbot";

fn var<'a>(env: &'a Env, name: &str) -> Option<&'a str> {
    env.var(name).map(str::trim).filter(|v| !v.is_empty())
}

/// `~` or `~/rest` against `home`; anything else as given.
fn expand(value: &str, home: &Path) -> PathBuf {
    match value.strip_prefix('~') {
        Some("") => home.to_owned(),
        Some(rest) if rest.starts_with('/') => home.join(rest.trim_start_matches('/')),
        _ => PathBuf::from(value),
    }
}

/// The home OpenClaw works from: `OPENCLAW_HOME` (its `~` being the account's home), else
/// the account's home.
fn home(env: &Env) -> PathBuf {
    match var(env, "OPENCLAW_HOME") {
        Some(h) => expand(h, &env.home),
        None => env.home.clone(),
    }
}

/// The config file OpenClaw reads: `OPENCLAW_CONFIG_PATH`; else the first that exists of
/// `openclaw.json` and `clawdbot.json` in `OPENCLAW_STATE_DIR`, `~/.openclaw` and
/// `~/.clawdbot`; else `openclaw.json` in the state dir it would create.
pub fn config_file(env: &Env) -> PathBuf {
    let home = home(env);
    if let Some(path) = var(env, "OPENCLAW_CONFIG_PATH") {
        return expand(path, &home);
    }
    let state = var(env, "OPENCLAW_STATE_DIR").map(|s| expand(s, &home));
    let dirs = state
        .iter()
        .cloned()
        .chain([home.join(STATE_DIR), home.join(LEGACY_STATE_DIR)]);
    for dir in dirs {
        for name in [CONFIG, LEGACY_CONFIG] {
            let candidate = dir.join(name);
            if candidate.exists() {
                return candidate;
            }
        }
    }
    let dir = state.unwrap_or_else(|| {
        let legacy = home.join(LEGACY_STATE_DIR);
        if !home.join(STATE_DIR).exists() && legacy.exists() {
            legacy
        } else {
            home.join(STATE_DIR)
        }
    });
    dir.join(CONFIG)
}

/// Whether the default gateway is installed as a service (systemd user unit or launchd
/// agent): only then can `openclaw gateway restart` restart something that runs.
pub fn gateway_service_installed(env: &Env) -> bool {
    [
        ".config/systemd/user/openclaw-gateway.service",
        "Library/LaunchAgents/ai.openclaw.gateway.plist",
    ]
    .iter()
    .any(|p| env.home_path(p).is_file())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn env(home: &Path, vars: &[(&str, &str)]) -> Env {
        Env {
            home: home.to_owned(),
            path: Vec::new(),
            vars: vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            runner: Box::new(crate::env::SystemRunner),
        }
    }

    #[test]
    fn the_config_is_found_where_openclaw_looks() {
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path();
        // Nothing yet: the canonical path.
        assert_eq!(config_file(&env(h, &[])), h.join(".openclaw/openclaw.json"));
        // Only the legacy state dir exists: OpenClaw reads it.
        std::fs::create_dir_all(h.join(".clawdbot")).unwrap();
        std::fs::write(h.join(".clawdbot/clawdbot.json"), "{}").unwrap();
        assert_eq!(config_file(&env(h, &[])), h.join(".clawdbot/clawdbot.json"));
        std::fs::create_dir_all(h.join(".openclaw")).unwrap();
        std::fs::write(h.join(".openclaw/openclaw.json"), "{}").unwrap();
        assert_eq!(config_file(&env(h, &[])), h.join(".openclaw/openclaw.json"));
        // A state dir holding a config, then an explicit path, win (one without a config
        // falls through to the ones that exist, as in OpenClaw); `~` is OPENCLAW_HOME's.
        let e = env(h, &[("OPENCLAW_STATE_DIR", "~/state")]);
        assert_eq!(config_file(&e), h.join(".openclaw/openclaw.json"));
        std::fs::create_dir_all(h.join("state")).unwrap();
        std::fs::write(h.join("state/openclaw.json"), "{}").unwrap();
        assert_eq!(config_file(&e), h.join("state/openclaw.json"));
        let e = env(
            h,
            &[("OPENCLAW_HOME", "~/oc"), ("OPENCLAW_STATE_DIR", "~/s")],
        );
        assert_eq!(config_file(&e), h.join("oc/s/openclaw.json"));
        let e = env(
            h,
            &[
                ("OPENCLAW_STATE_DIR", "~/state"),
                ("OPENCLAW_CONFIG_PATH", "/etc/oc.json5"),
            ],
        );
        assert_eq!(config_file(&e), PathBuf::from("/etc/oc.json5"));
    }
}
