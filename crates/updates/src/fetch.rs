//! Bounded GETs: repository metadata is small, and a server sending more is refused rather
//! than read into memory.

use crate::error::UpdateError;

pub async fn get(
    client: &reqwest::Client,
    url: &str,
    limit: usize,
) -> Result<Vec<u8>, UpdateError> {
    let failed = |why: String| UpdateError::Fetch {
        url: url.to_owned(),
        why,
    };
    let mut resp = client
        .get(url)
        .send()
        .await
        .map_err(|e| failed(e.without_url().to_string()))?;
    if !resp.status().is_success() {
        return Err(failed(format!("HTTP {}", resp.status())));
    }
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(failed(format!("larger than {limit} bytes")));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| failed(e.without_url().to_string()))?
    {
        if body.len() + chunk.len() > limit {
            return Err(failed(format!("larger than {limit} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
