//! At start: load the installed local model, or fetch the default one in the background
//! first. A failed download is tried again with a long backoff, so an offline or metered
//! machine is not hammered; meanwhile everything is retrieved by its words.

use std::sync::Arc;
use std::time::Duration;

use metaclaw_embed::DEFAULT_MANIFEST;

use super::local::{LocalModel, LocalState};
use crate::supervise::Supervisor;

/// Where model files are fetched from instead of the manifest's host (a mirror; tests point
/// it at a local server or a closed port, so they never download).
pub const MODELS_URL_ENV: &str = "METACLAW_MODELS_URL";

const FIRST_RETRY: Duration = Duration::from_secs(60);
const MAX_RETRY: Duration = Duration::from_secs(6 * 3600);
/// Connecting and each read; there is no limit on the whole download (hundreds of MB).
const NETWORK_TIMEOUT: Duration = Duration::from_secs(60);

const HUGGING_FACE: &str = "https://huggingface.co";

/// Where the default model's files are fetched from when not from its pinned Hugging Face
/// address: `METACLAW_MODELS_URL` (the whole address), else the same path on the mirror
/// `hf_endpoint` or `HF_ENDPOINT` names. `None`: Hugging Face itself.
pub fn models_url(hf_endpoint: Option<&str>) -> Option<String> {
    let set = |v: String| Some(v.trim().trim_end_matches('/').to_owned()).filter(|v| !v.is_empty());
    if let Some(url) = std::env::var(MODELS_URL_ENV).ok().and_then(set) {
        return Some(url);
    }
    let host = hf_endpoint
        .map(str::to_owned)
        .or_else(|| std::env::var("HF_ENDPOINT").ok())
        .and_then(set)?;
    let path = DEFAULT_MANIFEST.base_url.strip_prefix(HUGGING_FACE)?;
    Some(format!("{host}{path}"))
}

/// Loads `model` when installed; otherwise, when `download` is on and `model` is the default
/// model, downloads it (checked against its pinned checksums) and loads it. One supervised
/// task, ended by shutdown.
pub fn prepare(model: Arc<LocalModel>, download: bool, tasks: &Supervisor) {
    let shutdown = tasks.shutdown_token();
    tasks.spawn("local embedding model", async move {
        // Ends with the engine, even mid-download (the staged files are then removed).
        tokio::select! {
            () = shutdown.cancelled() => {}
            () = fetch_and_load(model, download) => {}
        }
    });
}

async fn fetch_and_load(model: Arc<LocalModel>, download: bool) {
    if load(&model).await {
        return;
    }
    if !download || model.name() != DEFAULT_MANIFEST.name {
        tracing::info!(model = model.name(), "{}", model.state().line(model.name()));
        return;
    }
    let client = match reqwest::Client::builder()
        .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(NETWORK_TIMEOUT)
        .read_timeout(NETWORK_TIMEOUT)
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "cannot download the local embedding model");
            return;
        }
    };
    let mirror = models_url(None);
    let from = mirror
        .clone()
        .unwrap_or_else(|| DEFAULT_MANIFEST.base_url.to_string());
    let mut wait = FIRST_RETRY;
    loop {
        if !model.set_download_state(LocalState::Downloading { from: from.clone() }) {
            return;
        }
        tracing::info!(
            model = model.name(),
            from = %from,
            bytes = DEFAULT_MANIFEST.total_size(),
            "downloading the local embedding model; until it is in, skills and memories are found by their words only"
        );
        match model
            .store()
            .download_default(&client, mirror.as_deref())
            .await
        {
            Ok(installed) => {
                tracing::info!(dir = %installed.dir.display(), "local embedding model downloaded");
                if load(&model).await {
                    return;
                }
            }
            Err(e) => {
                let error = e.to_string();
                tracing::warn!(
                    error = %error,
                    retry_in_secs = wait.as_secs(),
                    "cannot download the local embedding model; `metaclaw models import PATH` installs one by hand"
                );
                // A model imported while this download ran is not reported as failing.
                if !model.set_download_state(LocalState::Failed { error }) {
                    return;
                }
            }
        }
        tokio::time::sleep(wait).await;
        // Imported by hand meanwhile?
        if load(&model).await {
            return;
        }
        wait = (wait * 2).min(MAX_RETRY);
    }
}

/// Loads the installed model off the runtime's workers; whether it is ready.
async fn load(model: &Arc<LocalModel>) -> bool {
    let m = Arc::clone(model);
    matches!(
        tokio::task::spawn_blocking(move || m.load_installed()).await,
        Ok(Ok(true))
    )
}
