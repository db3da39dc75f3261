//! OpenClaw's official WeChat channel plugin (`@tencent-weixin/openclaw-weixin`): whether it
//! is installed, and the commands that install it, log in again and remove it.
//!
//! OpenClaw's config is only read here, never edited: `openclaw plugins install` (which the
//! plugin's installer runs) allowlists the plugin itself, and OpenClaw 2026.9 loads plugins
//! from its own install records, so the Python version's `plugins.allow`/`plugins.load.paths`
//! patching is not needed.

use std::path::PathBuf;

use serde_json::Value;

use crate::adapters::openclaw_config_file;
use crate::doc::{self, Format};
use crate::env::Env;

/// The plugin's id in OpenClaw (`plugins.entries.<id>`, the `--channel` of `channels login`).
pub const PLUGIN_ID: &str = "openclaw-weixin";
/// The installer the plugin's README and the earlier MetaClaw run (through `npx`).
pub const INSTALLER: &str = "@tencent-weixin/openclaw-weixin-cli@latest";

/// Whether OpenClaw has the plugin: an install record or entry in its config (OpenClaw 2026.9
/// keeps npm plugins under `npm/projects/`), or the older `extensions/openclaw-weixin/` layout.
pub fn installed(env: &Env) -> bool {
    let config = openclaw_config_file(env);
    let recorded = std::fs::read_to_string(&config)
        .ok()
        .and_then(|text| doc::open(Format::Json5, &text).ok())
        .is_some_and(|d| {
            [
                ["plugins", "installs", PLUGIN_ID],
                ["plugins", "entries", PLUGIN_ID],
            ]
            .iter()
            .any(|path| matches!(d.get(path), Some(Value::Object(_))))
        });
    recorded || extension_dir(env).is_some_and(|d| d.join("package.json").is_file())
}

/// `<state dir>/extensions/openclaw-weixin`, where OpenClaw before 2026.9 installed it.
fn extension_dir(env: &Env) -> Option<PathBuf> {
    Some(
        openclaw_config_file(env)
            .parent()?
            .join("extensions")
            .join(PLUGIN_ID),
    )
}

/// Installs the plugin and runs its first QR login (`npx` must be on PATH).
pub fn install_command() -> Vec<String> {
    ["npx", "-y", INSTALLER, "install"]
        .map(str::to_owned)
        .to_vec()
}

/// Logs in again with a new QR code (switches the WeChat account).
pub fn login_command() -> Vec<String> {
    ["openclaw", "channels", "login", "--channel", PLUGIN_ID]
        .map(str::to_owned)
        .to_vec()
}

/// Removes the plugin without OpenClaw's confirmation prompt (the user confirmed to MetaClaw).
pub fn uninstall_command() -> Vec<String> {
    ["openclaw", "plugins", "uninstall", PLUGIN_ID, "--force"]
        .map(str::to_owned)
        .to_vec()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn env(home: &std::path::Path) -> Env {
        Env {
            home: home.to_owned(),
            path: Vec::new(),
            vars: Default::default(),
            runner: Box::new(crate::env::SystemRunner),
        }
    }

    #[test]
    fn installed_from_an_install_record_an_entry_or_the_old_layout() {
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path();
        let oc = h.join(".openclaw");
        std::fs::create_dir_all(&oc).unwrap();
        assert!(!installed(&env(h)));
        // Other plugins, and a value that is not an object, do not count.
        std::fs::write(
            oc.join("openclaw.json"),
            "{plugins: {installs: {other: {}}, entries: {'openclaw-weixin': false}}}",
        )
        .unwrap();
        assert!(!installed(&env(h)));
        std::fs::write(
            oc.join("openclaw.json"),
            "// JSON5\n{plugins: {installs: {'openclaw-weixin': {source: 'npm'}}}}",
        )
        .unwrap();
        assert!(installed(&env(h)));
        std::fs::write(oc.join("openclaw.json"), "{}").unwrap();
        std::fs::create_dir_all(oc.join("extensions/openclaw-weixin")).unwrap();
        assert!(
            !installed(&env(h)),
            "a folder without its package is not a plugin"
        );
        std::fs::write(oc.join("extensions/openclaw-weixin/package.json"), "{}").unwrap();
        assert!(installed(&env(h)));
    }
}
