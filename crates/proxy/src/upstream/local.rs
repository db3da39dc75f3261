//! Main turns answered by the trained model (modes `rl` and `madmax`).
//!
//! The answer is shaped as if an OpenAI-compatible upstream had sent it, so the relay
//! translates, streams and records it exactly like any upstream reply: one path for every
//! protocol, stream or not.

use bytes::Bytes;
use serde_json::Value;
use tokio::time::Instant;

use super::local_sse;
use super::outbound;
use super::send::Answered;
use crate::config::UpstreamConfig;
use crate::seams::{LocalAnswer, LocalTurn, Protocol};
use crate::state::AppState;

/// Name the trained model goes by in turn records, stats and logs.
pub const TRAINED_MODEL: &str = "trained-model";

/// What the local path needs from the turn.
pub struct Offer<'a> {
    pub client: Protocol,
    pub session_id: &'a str,
    pub skill_generation: u64,
    pub query: &'a str,
    pub stream: bool,
    pub include_usage: bool,
    pub carried: &'a [String],
    pub held_out: bool,
}

/// The trained model's answer as an upstream reply, or `None` when the turn must go upstream.
pub async fn answer(state: &AppState, offer: Offer<'_>, request: &mut Value) -> Option<Answered> {
    let model = state.local.as_ref()?;
    let t = Instant::now();
    let forwarded = match outbound::body(offer.client, &pseudo_upstream(), request) {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(error = %e.message, "the trained model cannot take this request; sending it upstream");
            return None;
        }
    };
    let body: Value = match serde_json::from_slice(&forwarded) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "the trained model cannot take this request; sending it upstream");
            return None;
        }
    };
    let prep = t.elapsed();
    let turn = LocalTurn {
        session_id: offer.session_id,
        skill_generation: offer.skill_generation,
        query: offer.query,
        body: &body,
        carried: offer.carried,
        held_out: offer.held_out,
    };
    let completion = match model.answer(turn).await {
        LocalAnswer::Reply(c) => c,
        LocalAnswer::Unavailable(why) => {
            tracing::warn!(reason = %why, "the trained model is unavailable; this turn goes to the upstream LLM");
            state.metrics.upstream_failure(TRAINED_MODEL, "unavailable");
            return None;
        }
    };
    let bytes: Vec<Bytes> = if offer.stream {
        local_sse::chunks(&completion, offer.include_usage)
    } else {
        vec![Bytes::from(completion.to_string())]
    };
    let content_type = if offer.stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    let stream = futures_util::stream::iter(bytes.into_iter().map(Ok::<_, std::io::Error>));
    let response = http::Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(reqwest::Body::wrap_stream(stream))
        .ok()?;
    Some(Answered {
        response: reqwest::Response::from(response),
        upstream: usize::MAX,
        forwarded,
        prep,
    })
}

/// The request shape the trained model reads: OpenAI chat completions, model unchanged.
fn pseudo_upstream() -> UpstreamConfig {
    UpstreamConfig {
        name: TRAINED_MODEL.into(),
        protocol: Protocol::Openai,
        base_url: String::new(),
        model: None,
        api_key: None,
        extra_headers: Vec::new(),
    }
}
