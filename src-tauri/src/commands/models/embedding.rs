//! The local embedding model in `$METACLAW_HOME/models/embeddings/`: download the default one
//! (checked against its pinned checksums), import one for machines without the internet, and
//! what is installed. A running MetaClaw is told to load it.

use std::path::Path;

use metaclaw_embed::{DEFAULT_MANIFEST, Installed, ModelStore};
use metaclaw_engine::embeddings::models_url;
use metaclaw_engine::paths::Paths;
use serde_json::Value;

use crate::exit::{Failure, Outcome};
use crate::output;

fn store(paths: &Paths) -> ModelStore {
    ModelStore::new(paths.embedding_models())
}

/// Downloads the default model from `METACLAW_MODELS_URL`, else from Hugging Face or the
/// mirror in `--hf-endpoint` / `HF_ENDPOINT`.
pub fn download(paths: &Paths, hf_endpoint: Option<&str>) -> Outcome {
    let base = models_url(hf_endpoint);
    output::line(format!(
        "Downloading the embedding model {} ({} MB) from {} …",
        DEFAULT_MANIFEST.name,
        DEFAULT_MANIFEST.total_size() / 1_000_000,
        base.as_deref().unwrap_or(&DEFAULT_MANIFEST.base_url)
    ));
    let runtime = crate::admin_client::runtime()?;
    let client = reqwest::Client::builder()
        .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(std::time::Duration::from_secs(30))
        .read_timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| Failure::error(format!("cannot start an HTTP client: {e}")))?;
    let installed = runtime
        .block_on(store(paths).download_default(&client, base.as_deref()))
        .map_err(|e| Failure::error(format!("cannot download the embedding model: {e}")))?;
    installed_line(&installed);
    tell_running(paths);
    Ok(())
}

/// Installs the model at `source` (a folder or `.zip` in the sentence-transformers layout)
/// as the one MetaClaw uses.
pub fn import(paths: &Paths, source: &Path) -> Outcome {
    let installed = store(paths)
        .import(source, &DEFAULT_MANIFEST.name)
        .map_err(|e| Failure::error(format!("cannot import {}: {e}", source.display())))?;
    if let Some(warning) = installed.warning() {
        output::error(format!("warning: {warning}"));
    }
    installed_line(&installed);
    tell_running(paths);
    Ok(())
}

/// What is installed, and what the running MetaClaw retrieves with.
pub fn status(paths: &Paths) -> Outcome {
    let store = store(paths);
    let models = store
        .status()
        .map_err(|e| Failure::error(format!("cannot read {}: {e}", store.root().display())))?;
    if models.is_empty() {
        output::line(format!(
            "No embedding model in {}: skills and memories are found by their words only. \
             `metaclaw models download` fetches {} ({} MB); `metaclaw models import PATH` installs one from a folder or zip.",
            store.root().display(),
            DEFAULT_MANIFEST.name,
            DEFAULT_MANIFEST.total_size() / 1_000_000
        ));
    }
    for m in &models {
        let kind = if m.is_default {
            "the default model"
        } else {
            "not the default model"
        };
        output::line(format!(
            "{}: {} MB in {} ({kind})",
            m.name,
            m.size_bytes / 1_000_000,
            m.dir.display()
        ));
    }
    if let Some(running) = crate::admin_client::running(paths)? {
        let runtime = crate::admin_client::runtime()?;
        if let Ok(v) = runtime.block_on(running.get("/api/embeddings")) {
            output::line(format!("MetaClaw retrieves {}", line(&v)));
        }
    }
    Ok(())
}

fn installed_line(m: &Installed) {
    output::line(format!(
        "Installed {} ({} MB) in {}",
        m.name,
        m.size_bytes / 1_000_000,
        m.dir.display()
    ));
}

/// A running MetaClaw loads the model now rather than on its next look (a model replacing a
/// loaded one is used after a restart). Best effort: the model is installed either way.
fn tell_running(paths: &Paths) {
    let Ok(Some(running)) = crate::admin_client::running(paths) else {
        return;
    };
    let Ok(runtime) = crate::admin_client::runtime() else {
        return;
    };
    match runtime.block_on(running.post("/api/embeddings/reload")) {
        Ok(v) => output::line(format!("MetaClaw now retrieves {}", line(&v))),
        Err(e) => output::line(format!(
            "MetaClaw is running but did not load it ({}); it will on its next start",
            e.message
        )),
    }
}

fn line(status: &Value) -> String {
    status["line"].as_str().unwrap_or("").to_owned()
}
