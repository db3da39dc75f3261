//! macOS and Windows: there, an update installs from inside the app with Tauri's updater —
//! a signed artifact (`.app.tar.gz`, `.msi`) named by a JSON endpoint, verified with the public
//! key built in before anything is replaced. Only a release build that sets both
//! `METACLAW_UPDATER_PUBKEY` and `METACLAW_UPDATER_URL` gets it (docs/packaging.md); on
//! Linux the system's package manager installs, and this module is not built.

use tauri::plugin::TauriPlugin;
use tauri::{AppHandle, Wry};
use tauri_plugin_updater::UpdaterExt;

const PUBKEY: Option<&str> = option_env!("METACLAW_UPDATER_PUBKEY");
const ENDPOINT: Option<&str> = option_env!("METACLAW_UPDATER_URL");

/// Whether this build installs updates itself.
pub fn built_in() -> bool {
    PUBKEY.is_some() && ENDPOINT.is_some()
}

/// The updater plugin, when this build has a key to verify updates with.
pub fn plugin() -> Option<TauriPlugin<Wry>> {
    PUBKEY.map(|key| tauri_plugin_updater::Builder::new().pubkey(key).build())
}

/// Downloads the newer version, verifies its signature, installs it and restarts into it.
/// Called from the tray's update item, never in the middle of a training step.
pub async fn install(app: AppHandle) -> Result<(), String> {
    let (Some(_), Some(endpoint)) = (PUBKEY, ENDPOINT) else {
        return Err("this build installs no updates itself".into());
    };
    let url = endpoint
        .parse()
        .map_err(|e| format!("bad update endpoint: {e}"))?;
    let updater = app
        .updater_builder()
        .endpoints(vec![url])
        .map_err(|e| e.to_string())?
        .build()
        .map_err(|e| e.to_string())?;
    let Some(update) = updater.check().await.map_err(|e| e.to_string())? else {
        return Ok(());
    };
    update
        .download_and_install(|_, _| {}, || {})
        .await
        .map_err(|e| e.to_string())?;
    app.restart()
}
