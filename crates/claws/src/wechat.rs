//! OpenClaw's official WeChat channel plugin (`@tencent-weixin/openclaw-weixin`): whether it
//! is installed, and the commands that install it, log in again and remove it.
//!
//! OpenClaw's config is only read here, never edited: `openclaw plugins install` (which the
//! plugin's installer runs) allowlists the plugin itself, and OpenClaw 2026.9 loads plugins
//! from its own install records, so the Python version's `plugins.allow`/`plugins.load.paths`
//! patching is not needed.

use serde_json::Value;

use crate::adapters::openclaw_config_file;
use crate::doc::{self, Format};
use crate::env::Env;

/// The plugin's id in OpenClaw (`plugins.entries.<id>`, the `--channel` of `channels login`).
pub const PLUGIN_ID: &str = "openclaw-weixin";
/// The installer the plugin's README and the earlier MetaClaw run (through `npx`).
pub const INSTALLER: &str = "@tencent-weixin/openclaw-weixin-cli@latest";
/// The plugin's npm package.
const PLUGIN_PACKAGE: &str = "@tencent-weixin/openclaw-weixin";
/// How OpenClaw names the plugin's npm project folder (then `-<hash>`).
const NPM_PROJECT: &str = "tencent-weixin-openclaw-weixin-";

/// Whether OpenClaw has the plugin, by its files: OpenClaw 2026.9 installs npm plugins in
/// `<state dir>/npm/projects/<package>-<hash>/`, older ones in `extensions/openclaw-weixin/`
/// (or recorded them under `plugins.installs`). `plugins.entries.openclaw-weixin` does not
/// count: `openclaw plugins uninstall` leaves it behind (as `enabled: false`).
pub fn installed(env: &Env) -> bool {
    let config = openclaw_config_file(env);
    let Some(state) = config.parent() else {
        return false;
    };
    let recorded = std::fs::read_to_string(&config)
        .ok()
        .and_then(|text| doc::open(Format::Json5, &text).ok())
        .is_some_and(|d| {
            matches!(
                d.get(&["plugins", "installs", PLUGIN_ID]),
                Some(Value::Object(_))
            )
        });
    let in_npm_projects = std::fs::read_dir(state.join("npm/projects"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(NPM_PROJECT))
        .any(|e| {
            e.path()
                .join("node_modules")
                .join(PLUGIN_PACKAGE)
                .join("package.json")
                .is_file()
        });
    recorded
        || in_npm_projects
        || state
            .join("extensions")
            .join(PLUGIN_ID)
            .join("package.json")
            .is_file()
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
    fn installed_by_its_files_not_by_an_entry_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path();
        let oc = h.join(".openclaw");
        std::fs::create_dir_all(&oc).unwrap();
        assert!(!installed(&env(h)));
        // What `openclaw plugins uninstall` leaves (OpenClaw 2026.9.6): the entry, disabled.
        std::fs::write(
            oc.join("openclaw.json"),
            "{plugins: {entries: {'openclaw-weixin': {enabled: false}}, installs: {other: {}}}}",
        )
        .unwrap();
        assert!(!installed(&env(h)));
        // Where `openclaw plugins install` puts it (OpenClaw 2026.9.6).
        let project = oc.join("npm/projects/tencent-weixin-openclaw-weixin-7783ac86ba");
        std::fs::create_dir_all(project.join("node_modules/@tencent-weixin/openclaw-weixin"))
            .unwrap();
        assert!(
            !installed(&env(h)),
            "a project folder without the package is not it"
        );
        std::fs::write(
            project.join("node_modules/@tencent-weixin/openclaw-weixin/package.json"),
            "{}",
        )
        .unwrap();
        assert!(installed(&env(h)));
        std::fs::remove_dir_all(oc.join("npm")).unwrap();
        // An older OpenClaw's install record, and its extensions folder.
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
