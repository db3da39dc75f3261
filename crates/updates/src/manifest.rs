//! For a build from source: a small JSON manifest at `updates.manifest_url`,
//! `{"version": "0.2.0"}`, naming the newest release.

use serde::Deserialize;

use crate::error::UpdateError;

const LIMIT: usize = 64 * 1024;

#[derive(Deserialize)]
struct Manifest {
    version: String,
}

/// The version the manifest names.
pub async fn newest(client: &reqwest::Client, url: &str) -> Result<String, UpdateError> {
    let body = crate::fetch::get(client, url, LIMIT).await?;
    let m: Manifest = serde_json::from_slice(&body).map_err(|e| UpdateError::Manifest {
        url: url.to_owned(),
        why: e.to_string(),
    })?;
    let v = m.version.trim();
    if v.is_empty() || !v.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(UpdateError::Manifest {
            url: url.to_owned(),
            why: format!("{v:?} is not a version"),
        });
    }
    Ok(v.to_owned())
}
