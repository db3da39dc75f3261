//! Main turns answered by the current sampler: render the prompt with the model's chat
//! template, sample, parse thinking and tool calls, keep the exact sampled tokens and their
//! logprobs as a training sample, answer as an OpenAI chat completion.

use std::sync::Arc;

use metaclaw_learn::chat::normalize_messages;
use metaclaw_learn::reply::parse_reply;
use metaclaw_learn::tokenizer::TokenizerError;
use metaclaw_learn::{LearnError, SamplingParams, Stop};
use metaclaw_proxy::seams::{BoxFuture, LocalAnswer, LocalModel, LocalTurn};
use metaclaw_store::NewSample;
use serde_json::{Map, Value, json};

use super::service::{Learning, Link, now_ms, ordering};

/// Temperature when the request sets none (the earlier implementation's default).
const DEFAULT_TEMPERATURE: f32 = 0.7;

/// Why a turn was not answered by the trained model (it then goes to the upstream LLM).
#[derive(Debug, thiserror::Error)]
enum Unserved {
    /// Not connected yet, or the connection failed (the reason it gave).
    #[error("{0}")]
    NotReady(String),
    #[error("no sampler is open")]
    NoSampler,
    #[error("cannot render the prompt with the model's chat template: {0}")]
    Template(TokenizerError),
    #[error("sampling failed: {0}")]
    Sampling(LearnError),
    #[error("the sampler returned no sequence")]
    NoSequence,
    #[error(transparent)]
    Decode(TokenizerError),
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
}

pub struct TrainedModel(pub Learning);

impl LocalModel for TrainedModel {
    fn answer<'a>(&'a self, turn: LocalTurn<'a>) -> BoxFuture<'a, LocalAnswer> {
        Box::pin(async move {
            let inner = &self.0.inner;
            match answer(&self.0, &turn).await {
                Ok(completion) => {
                    inner.sampled.fetch_add(1, ordering());
                    LocalAnswer::Reply(completion)
                }
                Err(why) => {
                    inner.fallback.fetch_add(1, ordering());
                    LocalAnswer::Unavailable(why.to_string())
                }
            }
        })
    }
}

async fn answer(learning: &Learning, turn: &LocalTurn<'_>) -> Result<Value, Unserved> {
    let inner = &learning.inner;
    let Some(ready) = inner.ready.get() else {
        return Err(Unserved::NotReady(match learning.link() {
            Link::Unavailable(why) => why,
            _ => "still connecting to the training backend".into(),
        }));
    };
    let sampler = ready.trainer.slot().current().ok_or(Unserved::NoSampler)?;
    let body = turn.body;
    let messages = normalize_messages(
        body.get("messages")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice),
    );
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty())
        .cloned();
    let tokenizer = Arc::clone(&ready.tokenizer);
    let prompt = {
        let messages = messages.clone();
        tokio::task::spawn_blocking(move || {
            tokenizer.encode_chat(&messages, tools.as_deref(), true, &Map::new())
        })
        .await?
        .map_err(Unserved::Template)?
    };
    let params = sampling_params(body, learning.settings().max_new_tokens, &ready.stop_ids);
    let out = ready
        .backend
        .sample(&sampler, &prompt, &params)
        .await
        .map_err(Unserved::Sampling)?;
    let seq = out
        .sequences
        .into_iter()
        .next()
        .ok_or(Unserved::NoSequence)?;
    let text = ready
        .tokenizer
        .decode(&seq.tokens, false)
        .map_err(Unserved::Decode)?;
    let markers: Vec<&str> = ready.end_markers.iter().map(String::as_str).collect();
    let parsed = parse_reply(&text, &markers);
    let length_cut = matches!(seq.stop_reason, metaclaw_learn::StopReason::Length);

    // The sample: exactly what was sampled. A storage failure costs the sample, not the turn.
    let follow_up = follow_up(&messages, turn.query);
    let sample = NewSample {
        session_id: turn.session_id.to_owned(),
        turn_index: 0,
        skill_generation: i64::try_from(turn.skill_generation).unwrap_or(i64::MAX),
        prompt_tokens: prompt.clone(),
        completion_tokens: seq.tokens.clone(),
        completion_logprobs: seq.logprobs.clone(),
        sampler_path: match &sampler.source {
            metaclaw_learn::SamplerSource::Path(p) => Some(p.clone()),
            metaclaw_learn::SamplerSource::BaseModel(_) => None,
        },
        instruction: turn.query.to_owned(),
        response_text: text.clone(),
        created_at_ms: now_ms(),
        carried: turn.carried.to_vec(),
        held_out: turn.held_out,
    };
    if let Err(e) = keep_sample(learning, sample, &follow_up) {
        tracing::warn!(error = %e, "could not store the training sample");
    }
    inner.wake_judge.notify_one();

    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(&learning.settings().served_model)
        .to_owned();
    let finish = parsed.finish_reason(if length_cut { "length" } else { "stop" });
    Ok(json!({
        "id": format!("chatcmpl-mc-{}", now_ms()),
        "object": "chat.completion",
        "created": now_ms() / 1000,
        "model": model,
        "choices": [{
            "index": 0,
            "message": parsed.to_openai_message(),
            "finish_reason": finish,
            "logprobs": null,
        }],
        "usage": {
            "prompt_tokens": prompt.len(),
            "completion_tokens": seq.tokens.len(),
            "total_tokens": prompt.len() + seq.tokens.len(),
        },
    }))
}

/// The previous turn of the session gets this request's newest message as its evidence;
/// then this turn is stored with the next turn index.
fn keep_sample(
    learning: &Learning,
    mut sample: NewSample,
    follow_up: &str,
) -> Result<(), metaclaw_learn::LearnError> {
    let samples = &learning.inner.samples;
    let previous = samples.with(|s| s.last_sample_of_session(&sample.session_id))?;
    if let Some(id) = previous {
        if !follow_up.is_empty() {
            samples.record_next_turn(&sample.session_id, follow_up)?;
        }
        sample.turn_index = samples.get(id)?.map_or(0, |row| row.turn_index) + 1;
    }
    samples.insert(&sample)?;
    Ok(())
}

fn sampling_params(body: &Value, default_max: u32, stop_ids: &[u32]) -> SamplingParams {
    let max_tokens = ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .unwrap_or(default_max);
    let temperature = body
        .get("temperature")
        .and_then(Value::as_f64)
        .map_or(DEFAULT_TEMPERATURE, |t| t as f32);
    SamplingParams {
        max_tokens,
        temperature,
        top_p: body.get("top_p").and_then(Value::as_f64).map(|p| p as f32),
        seed: body.get("seed").and_then(Value::as_u64),
        stop: if stop_ids.is_empty() {
            Stop::Eos
        } else {
            Stop::Tokens(stop_ids.to_vec())
        },
        ..SamplingParams::default()
    }
}

/// The newest message (the user's reply, or a tool's result): the evidence the judge reads
/// for the turn before it. A user message is taken as the user wrote it (`query`), without
/// the block MetaClaw injected into it.
fn follow_up(messages: &[Value], query: &str) -> String {
    let Some(last) = messages.last() else {
        return String::new();
    };
    match last.get("role").and_then(Value::as_str) {
        Some("user") => query.to_owned(),
        Some("assistant") | None => String::new(),
        Some(_) => match last.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
    }
}
