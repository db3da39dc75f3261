//! `POST /v1/embeddings`: deterministic bag-of-words vectors. Lowercase alphanumeric words are
//! hashed (FNV-1a) into [`DIMS`] buckets and the counts L2-normalised, so texts that share
//! words have a high cosine and a test can predict which texts are "similar". A few
//! [`SYNONYMS`] embed as one word, standing in for what real models learn, so a test can
//! show a match that shares no word at all.

use axum::Json;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::errors::{self, ErrorKind, Protocol};
use super::fault::{self, Fault};
use super::routes::delay_for;
use super::state::Shared;

/// Dimensions of every vector the fake returns.
pub const DIMS: usize = 64;

pub async fn respond(s: &Shared, body: &Value) -> Response {
    let (model, inputs) = match validate(body) {
        Ok(v) => v,
        Err(msg) => {
            return errors::error_response(Protocol::OpenAi, ErrorKind::InvalidRequest, &msg);
        }
    };
    // A queued fault wins over a marker, as on the chat routes.
    let marker = inputs.iter().find_map(|t| fault::extract_marker(t).1);
    let fault: Option<Fault> = s.pop_fault().or(marker);
    if let Some(resp) = fault.and_then(|f| errors::fault_response(Protocol::OpenAi, f)) {
        return resp;
    }
    if let Err(resp) = delay_for(s, Protocol::OpenAi, fault).await {
        return resp;
    }
    let tokens: usize = inputs.iter().map(|t| words(t).count()).sum();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({ "object": "embedding", "index": i, "embedding": embed(text) }))
        .collect();
    Json(json!({
        "object": "list",
        "data": data,
        "model": model,
        "usage": { "prompt_tokens": tokens, "total_tokens": tokens },
    }))
    .into_response()
}

/// The model and the input texts, or the 400 message the real API would give.
fn validate(body: &Value) -> Result<(String, Vec<String>), String> {
    let obj = body
        .as_object()
        .ok_or("The request body must be a JSON object.")?;
    let model = match obj.get("model") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        Some(_) => return Err("Invalid type for 'model': expected a string.".into()),
        None => return Err("Missing required parameter: 'model'.".into()),
    };
    let inputs = match obj.get("input") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or("Invalid type for 'input': expected a string or an array of strings.")?,
        Some(_) => {
            return Err(
                "Invalid type for 'input': expected a string or an array of strings.".into(),
            );
        }
        None => return Err("Missing required parameter: 'input'.".into()),
    };
    if inputs.is_empty() || inputs.iter().any(String::is_empty) {
        return Err("Invalid 'input': empty inputs are not allowed.".into());
    }
    Ok((model, inputs))
}

/// Words embedded as another: "puppy" is as close to "dog" as "dog" itself.
pub const SYNONYMS: &[(&str, &str)] = &[("puppy", "dog"), ("canine", "dog"), ("hound", "dog")];

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .map(|w| match SYNONYMS.iter().find(|(from, _)| *from == w) {
            Some((_, to)) => (*to).to_owned(),
            None => w,
        })
}

/// The fake's embedding of `text`; all zeros when it has no words.
pub fn embed(text: &str) -> Vec<f32> {
    let mut counts = [0f32; DIMS];
    for word in words(text) {
        let bucket = fnv1a(word.as_bytes()) % DIMS as u64;
        counts[bucket as usize] += 1.0;
    }
    let norm = counts.iter().map(|c| c * c).sum::<f32>().sqrt();
    if norm > 0.0 {
        counts.iter_mut().for_each(|c| *c /= norm);
    }
    counts.to_vec()
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn shared_words_are_close_and_empty_is_zero() {
        let a = embed("Deploy the Rust service");
        let b = embed("deploy rust service now");
        let c = embed("banana smoothie recipe");
        assert!(cosine(&a, &b) > 0.6);
        assert!(cosine(&a, &b) > cosine(&a, &c));
        assert!((cosine(&a, &a) - 1.0).abs() < 1e-5);
        assert!(embed("  ... ").iter().all(|v| *v == 0.0));
        assert_eq!(embed("my puppy"), embed("my dog"));
        assert_eq!(embed("x").len(), DIMS);
    }
}
