//! Downloading a model whose files are pinned by a [`Manifest`].

use std::path::{Component, Path};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::checksum::hex;
use crate::error::{EmbedError, IoContext, Result};
use crate::manifest::{DEFAULT_MANIFEST, Manifest, ManifestFile};
use crate::store::{Installed, ModelStore};

/// Tries per file; a dropped connection or a server error is worth another go, a wrong
/// checksum is not.
const ATTEMPTS: u32 = 4;
/// Wait before the second try; doubled before each further one.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

enum Failure {
    Retry(String),
    Fatal(EmbedError),
}

impl ModelStore {
    /// Downloads the default model ([`DEFAULT_MANIFEST`]) and installs it.
    pub async fn download_default(
        &self,
        client: &reqwest::Client,
        base_url_override: Option<&str>,
    ) -> Result<Installed> {
        self.download(client, &DEFAULT_MANIFEST, base_url_override)
            .await
    }

    /// Downloads every file of `manifest` from `base_url_override` (or the manifest's own
    /// base URL), checks each one's size and SHA-256, then installs the model under the
    /// manifest's name like [`import`](Self::import) does. Any failure leaves the store as it
    /// was. Timeouts are the client's.
    pub async fn download(
        &self,
        client: &reqwest::Client,
        manifest: &Manifest,
        base_url_override: Option<&str>,
    ) -> Result<Installed> {
        let name = manifest.name.to_string();
        self.dir(&name)?;
        let base = base_url_override
            .unwrap_or(&manifest.base_url)
            .trim_end_matches('/');
        let staged = self.stage()?;
        for file in manifest.files.iter() {
            let dest = staged.path().join(relative(file)?);
            if let Some(parent) = dest.parent() {
                tokio::fs::create_dir_all(parent).await.at(parent)?;
            }
            let url = format!("{base}/{}", file.path);
            fetch(client, &url, file, &dest).await?;
        }
        let store = self.clone();
        // Loading the model to prove it works is seconds of CPU: off the async workers.
        tokio::task::spawn_blocking(move || store.commit(staged, &name))
            .await
            .map_err(|e| EmbedError::Io {
                path: self.root().to_path_buf(),
                source: std::io::Error::other(e),
            })?
    }
}

/// A manifest path as a path under the model folder, refusing anything that could leave it.
fn relative(file: &ManifestFile) -> Result<&Path> {
    let path = Path::new(file.path.as_ref());
    if path.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(path)
    } else {
        Err(EmbedError::InvalidName(file.path.to_string()))
    }
}

async fn fetch(
    client: &reqwest::Client,
    url: &str,
    file: &ManifestFile,
    dest: &Path,
) -> Result<()> {
    let mut backoff = FIRST_BACKOFF;
    let mut attempt = 1;
    loop {
        match fetch_once(client, url, file, dest).await {
            Ok(()) => return Ok(()),
            Err(Failure::Fatal(e)) => return Err(e),
            Err(Failure::Retry(reason)) if attempt >= ATTEMPTS => {
                return Err(EmbedError::Download {
                    file: file.path.to_string(),
                    url: url.to_string(),
                    reason: format!("{reason} (after {ATTEMPTS} attempts)"),
                });
            }
            Err(Failure::Retry(reason)) => {
                tracing::warn!(file = %file.path, attempt, %reason, "model download failed, retrying");
                tokio::time::sleep(backoff).await;
                backoff *= 2;
                attempt += 1;
            }
        }
    }
}

/// One streaming GET into `dest` (rewritten from the start), checked against the pin.
async fn fetch_once(
    client: &reqwest::Client,
    url: &str,
    file: &ManifestFile,
    dest: &Path,
) -> Result<(), Failure> {
    let fatal = |reason: String| {
        Failure::Fatal(EmbedError::Download {
            file: file.path.to_string(),
            url: url.to_string(),
            reason,
        })
    };
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| Failure::Retry(e.to_string()))?;
    let status = response.status();
    if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        return Err(Failure::Retry(format!("HTTP {status}")));
    }
    if !status.is_success() {
        return Err(fatal(format!("HTTP {status}")));
    }
    let mut out = tokio::fs::File::create(dest)
        .await
        .at(dest)
        .map_err(Failure::Fatal)?;
    let mut hasher = Sha256::new();
    let mut received: u64 = 0;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| Failure::Retry(e.to_string()))?
    {
        received += chunk.len() as u64;
        if received > file.size {
            return Err(fatal(format!(
                "the server sent more than the pinned {} bytes",
                file.size
            )));
        }
        hasher.update(&chunk);
        out.write_all(&chunk)
            .await
            .at(dest)
            .map_err(Failure::Fatal)?;
    }
    out.flush().await.at(dest).map_err(Failure::Fatal)?;
    if received < file.size {
        return Err(Failure::Retry(format!(
            "the transfer stopped after {received} of {} bytes",
            file.size
        )));
    }
    let actual = hex(&hasher.finalize());
    if actual != file.sha256 {
        return Err(Failure::Fatal(EmbedError::Checksum {
            file: file.path.to_string(),
            expected: file.sha256.to_string(),
            actual,
        }));
    }
    tracing::info!(file = %file.path, bytes = received, "model file downloaded and verified");
    Ok(())
}
