//! Downloading a model's tokenizer files from a Hugging Face-compatible server into
//! `$METACLAW_HOME/models/<model id>/`. Each file is written to a temporary name in the
//! same directory and renamed into place, so a reader never sees a partial file, and the
//! files are only put in place once both required ones arrived and parse.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::TokenizerError;
use crate::retry::random_key;

pub const HF_DEFAULT_BASE_URL: &str = "https://huggingface.co";

/// Required files, then optional ones (a 404 on those is fine).
const REQUIRED: [&str; 2] = ["tokenizer.json", "tokenizer_config.json"];
const OPTIONAL: [&str; 1] = ["chat_template.jinja"];

/// Where to download from.
#[derive(Clone)]
pub struct ModelSource {
    /// `https://huggingface.co` or a mirror (`HF_ENDPOINT`).
    pub base_url: String,
    pub revision: String,
    /// For gated models; sent as a bearer token, never shown.
    pub token: Option<String>,
}

impl std::fmt::Debug for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSource")
            .field("base_url", &self.base_url)
            .field("revision", &self.revision)
            .finish_non_exhaustive()
    }
}

impl Default for ModelSource {
    fn default() -> Self {
        Self {
            base_url: HF_DEFAULT_BASE_URL.to_owned(),
            revision: "main".to_owned(),
            token: None,
        }
    }
}

/// `owner/name` or `name`, made of letters, digits, `-`, `_` and `.`, never `..`.
fn check_model_id(id: &str) -> Result<(), TokenizerError> {
    let parts: Vec<&str> = id.split('/').collect();
    let ok = (1..=2).contains(&parts.len())
        && parts.iter().all(|p| {
            !p.is_empty()
                && *p != "."
                && *p != ".."
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        });
    if ok {
        Ok(())
    } else {
        Err(TokenizerError::InvalidModelId(id.to_owned()))
    }
}

/// `<home>/models/<model id>`.
pub fn model_dir(home: &Path, model_id: &str) -> Result<PathBuf, TokenizerError> {
    check_model_id(model_id)?;
    Ok(home.join("models").join(model_id))
}

/// Downloads the tokenizer files of `model_id` into `<home>/models/<model id>/` and
/// returns that directory.
pub async fn download_tokenizer(
    source: &ModelSource,
    home: &Path,
    model_id: &str,
) -> Result<PathBuf, TokenizerError> {
    let dir = model_dir(home, model_id)?;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| TokenizerError::Io { path, source }
    };
    tokio::fs::create_dir_all(&dir).await.map_err(io(&dir))?;
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(300))
        .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| TokenizerError::Download {
            url: source.base_url.clone(),
            detail: e.to_string(),
        })?;
    let base = source.base_url.trim_end_matches('/');
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let result = async {
        for (name, required) in REQUIRED
            .iter()
            .map(|n| (n, true))
            .chain(OPTIONAL.iter().map(|n| (n, false)))
        {
            let url = format!("{base}/{model_id}/resolve/{}/{name}", source.revision);
            let Some(bytes) = fetch(&client, &url, source.token.as_deref(), required).await? else {
                continue;
            };
            if name.ends_with(".json") {
                serde_json::from_slice::<serde_json::Value>(&bytes).map_err(|e| {
                    TokenizerError::Download {
                        url: url.clone(),
                        detail: format!("not valid JSON: {e}"),
                    }
                })?;
            }
            let tmp = dir.join(format!(".{name}.{}.tmp", random_key()));
            tokio::fs::write(&tmp, &bytes).await.map_err(io(&tmp))?;
            staged.push((tmp, dir.join(name)));
        }
        Ok::<(), TokenizerError>(())
    }
    .await;
    if let Err(e) = result {
        for (tmp, _) in &staged {
            let _ = tokio::fs::remove_file(tmp).await;
        }
        return Err(e);
    }
    for (tmp, dest) in &staged {
        tokio::fs::rename(tmp, dest).await.map_err(io(dest))?;
    }
    Ok(dir)
}

/// The body of `url`; `None` for a 404 on an optional file.
async fn fetch(
    client: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    required: bool,
) -> Result<Option<Vec<u8>>, TokenizerError> {
    let mut req = client.get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let fail = |detail: String| TokenizerError::Download {
        url: url.to_owned(),
        detail,
    };
    let resp = req.send().await.map_err(|e| fail(e.to_string()))?;
    let status = resp.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return if required {
            Err(TokenizerError::NotFound {
                url: url.to_owned(),
            })
        } else {
            Ok(None)
        };
    }
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return Err(fail(format!(
            "HTTP {status}: the model may be gated; a Hugging Face token with access is needed"
        )));
    }
    if !status.is_success() {
        return Err(fail(format!("HTTP {status}")));
    }
    let bytes = resp.bytes().await.map_err(|e| fail(e.to_string()))?;
    Ok(Some(bytes.to_vec()))
}
