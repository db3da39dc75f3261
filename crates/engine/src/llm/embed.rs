//! OpenAI-style embeddings: `POST {base}/embeddings`.

use serde::Deserialize;
use serde_json::json;

use super::calls::Purpose;
use super::endpoint::Endpoint;
use super::error::LlmError;
use super::http::{malformed, post_json};

#[derive(Deserialize)]
struct Reply {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

/// One vector per input, in input order. No request is made for no inputs.
pub async fn embed(
    http: &reqwest::Client,
    ep: &Endpoint,
    inputs: &[String],
) -> Result<Vec<Vec<f32>>, LlmError> {
    if inputs.is_empty() {
        return Ok(Vec::new());
    }
    let body = json!({ "model": ep.model, "input": inputs });
    let value = post_json(http, ep, "embeddings", &body, Purpose::Embeddings)
        .await?
        .map_err(|r| r.into_error(ep))?;
    let reply: Reply =
        serde_json::from_value(value).map_err(|e| malformed(ep, format!("embeddings: {e}")))?;
    // Providers may return items out of order; `index` is authoritative.
    let mut out: Vec<Option<Vec<f32>>> = vec![None; inputs.len()];
    for item in reply.data {
        let slot = out
            .get_mut(item.index)
            .ok_or_else(|| malformed(ep, format!("embedding index {} out of range", item.index)))?;
        if slot.replace(item.embedding).is_some() {
            return Err(malformed(
                ep,
                format!("embedding index {} repeated", item.index),
            ));
        }
    }
    let got = out.iter().filter(|v| v.is_some()).count();
    out.into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| malformed(ep, format!("{got} embeddings for {} inputs", inputs.len())))
}
