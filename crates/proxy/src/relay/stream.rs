//! SSE relay: each upstream chunk reaches the client as soon as it arrives (translated when the
//! protocols differ), a copy is teed for the recorder, and the turn is recorded when the stream
//! ends — completed, broken upstream, stalled, or abandoned by the client.

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use metaclaw_wire::sse::{SseDecoder, encode};
use metaclaw_wire::translate::{AnthropicToOpenAiStream, OpenAiToAnthropicStream};
use metaclaw_wire::{anthropic, errors, openai};
use tokio::time::Instant;

use super::finale::Finale;
use super::headers;
use super::record::Draft;
use super::withhold::Withhold;
use crate::seams::TokenUsage;
use crate::seams::{Protocol, ReplyCapture};
use crate::state::SharedState;
use crate::upstream::send::Answered;

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

enum Mode {
    /// Same protocol: bytes go out exactly as they came in.
    Pass,
    /// OpenAI to a client that did not ask for usage: as `Pass`, without the usage MetaClaw
    /// asked for.
    PassWithheld(Withhold),
    OpenAiToAnthropic(SseDecoder, OpenAiToAnthropicStream),
    AnthropicToOpenAi(SseDecoder, AnthropicToOpenAiStream),
}

/// Records the turn when dropped, so a client that goes away still leaves a record.
struct Tee {
    draft: Option<Draft>,
    sent: Vec<Bytes>,
    first_byte: Option<Instant>,
    error: Option<String>,
    completed: bool,
    state: SharedState,
    /// The upstream's usage, when the relay read it on the way (see `TurnRecord`).
    usage: Option<TokenUsage>,
}

impl Tee {
    fn sent(&mut self, b: &Bytes) {
        if self.first_byte.is_none() {
            let now = Instant::now();
            self.first_byte = Some(now);
            if let Some(d) = &self.draft {
                self.state
                    .metrics
                    .ttft_seconds
                    .observe(now.saturating_duration_since(d.arrived).as_secs_f64());
            }
        }
        self.sent.push(b.clone());
    }
}

impl Drop for Tee {
    fn drop(&mut self) {
        let Some(draft) = self.draft.take() else {
            return;
        };
        let error = match (&self.error, self.completed) {
            (Some(e), _) => Some(e.clone()),
            (None, true) => None,
            (None, false) => Some("client disconnected before the reply ended".to_string()),
        };
        if let Some(e) = &error {
            self.state.metrics.stream_errors.inc();
            self.state.stats.error(e);
        }
        self.state.metrics.inflight.dec();
        let sent = std::mem::take(&mut self.sent);
        let mut draft = draft;
        draft.figures.upstream_usage = self.usage.or(draft.figures.upstream_usage);
        draft.finish(ReplyCapture::Sse(sent), 200, error, self.first_byte);
    }
}

struct Relay {
    upstream: ByteStream,
    mode: Mode,
    pending: VecDeque<Bytes>,
    tee: Tee,
    idle: Duration,
    done: bool,
    /// Whether the upstream's final event went by; a stream that ends without it was cut.
    finale: Finale,
}

pub fn respond(
    state: SharedState,
    answered: Answered,
    mut draft: Draft,
    include_usage: bool,
) -> Response {
    let t_post = Instant::now();
    let client = draft.client_protocol;
    let finale = Finale::new(draft.upstream_protocol);
    let mode = match (client, draft.upstream_protocol) {
        (Protocol::Openai, Protocol::Openai) if !include_usage => {
            Mode::PassWithheld(Withhold::new())
        }
        (a, b) if a == b => Mode::Pass,
        (Protocol::Anthropic, _) => Mode::OpenAiToAnthropic(
            SseDecoder::new(),
            OpenAiToAnthropicStream::new(draft.model.clone()),
        ),
        (Protocol::Openai, _) => Mode::AnthropicToOpenAi(
            SseDecoder::new(),
            AnthropicToOpenAiStream::new(include_usage),
        ),
    };
    let mut resp_headers = axum::http::HeaderMap::new();
    headers::passthrough(answered.response.headers(), &mut resp_headers);
    draft.overhead += t_post.elapsed();
    headers::metaclaw(&mut resp_headers, draft.overhead_ms(), &draft.session_id);
    state
        .metrics
        .overhead_seconds
        .observe(draft.overhead.as_secs_f64());
    state.metrics.inflight.inc();
    let relay = Relay {
        upstream: Box::pin(answered.response.bytes_stream()),
        mode,
        pending: VecDeque::new(),
        idle: state.config.first_byte_timeout,
        tee: Tee {
            draft: Some(draft),
            sent: Vec::new(),
            first_byte: None,
            error: None,
            completed: false,
            state,
            usage: None,
        },
        done: false,
        finale,
    };
    let body = futures_util::stream::unfold(relay, |mut r| async move {
        r.next_chunk()
            .await
            .map(|b| (Ok::<_, std::convert::Infallible>(b), r))
    });
    let mut resp = Response::new(Body::from_stream(body));
    *resp.status_mut() = StatusCode::OK;
    let h = resp.headers_mut();
    h.extend(resp_headers);
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

impl Relay {
    async fn next_chunk(&mut self) -> Option<Bytes> {
        loop {
            if let Some(b) = self.pending.pop_front() {
                self.tee.sent(&b);
                if self.pending.is_empty() && self.finale.seen() {
                    // The client has every event through the upstream's final one; SDKs may
                    // hang up as soon as they read it, before the upstream closes its end.
                    self.tee.completed = true;
                }
                return Some(b);
            }
            if self.done {
                return None;
            }
            match tokio::time::timeout(self.idle, self.upstream.next()).await {
                Ok(Some(Ok(bytes))) => {
                    if self.upstream_bytes(bytes) {
                        // A translated stream ends with its terminal event, not when the
                        // upstream gets round to closing the connection.
                        self.done = true;
                        self.upstream_ended();
                    }
                }
                Ok(None) if self.finale.seen() => {
                    self.done = true;
                    self.upstream_ended();
                }
                Ok(None) => {
                    self.done = true;
                    self.broke(
                        "the upstream closed the stream before its final event; the reply is incomplete"
                            .to_string(),
                    );
                }
                Ok(Some(Err(e))) => {
                    self.done = true;
                    self.broke(format!("the upstream stream broke off: {e}"));
                }
                Err(_) => {
                    self.done = true;
                    self.broke(format!(
                        "the upstream sent nothing for {} s",
                        self.idle.as_secs_f64()
                    ));
                }
            }
        }
    }

    /// Queues what `bytes` complete for the client; true once a translated stream's terminal
    /// event (`[DONE]`, `message_stop`) went by.
    fn upstream_bytes(&mut self, bytes: Bytes) -> bool {
        match &mut self.mode {
            Mode::Pass => {
                self.finale.scan(&bytes);
                self.pending.push_back(bytes);
            }
            Mode::PassWithheld(w) => {
                self.finale.scan(&bytes);
                w.push(&bytes, &mut self.pending);
                self.tee.usage = w.usage();
            }
            Mode::OpenAiToAnthropic(decoder, tr) => {
                for ev in decoder.push(&bytes) {
                    if ev.data.trim() == "[DONE]" {
                        self.finale.see();
                        return true;
                    }
                    match serde_json::from_str::<openai::ChatChunk>(&ev.data) {
                        Ok(chunk) => {
                            if chunk.choices.iter().any(|c| c.finish_reason.is_some()) {
                                self.finale.see();
                            }
                            for out in tr.push(chunk) {
                                push_anthropic(&mut self.pending, &out);
                            }
                            self.tee.usage = tr.upstream_usage().map(TokenUsage::from);
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "skipped an unreadable upstream chunk")
                        }
                    }
                }
            }
            Mode::AnthropicToOpenAi(decoder, tr) => {
                for ev in decoder.push(&bytes) {
                    match serde_json::from_str::<anthropic::StreamEvent>(&ev.data) {
                        Ok(event) => {
                            let stop = matches!(event, anthropic::StreamEvent::MessageStop { .. });
                            for out in tr.push(event) {
                                push_openai(&mut self.pending, &out);
                            }
                            self.tee.usage = tr.upstream_usage().map(TokenUsage::from);
                            if stop {
                                self.finale.see();
                                return true;
                            }
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "skipped an unreadable upstream event")
                        }
                    }
                }
            }
        }
        false
    }

    fn upstream_ended(&mut self) {
        self.tee.completed = true;
        match &mut self.mode {
            Mode::Pass => {}
            Mode::PassWithheld(w) => {
                w.finish(&mut self.pending);
                self.tee.usage = w.usage();
            }
            Mode::OpenAiToAnthropic(_, tr) => {
                for out in tr.finish() {
                    push_anthropic(&mut self.pending, &out);
                }
            }
            Mode::AnthropicToOpenAi(_, tr) => {
                for out in tr.finish() {
                    push_openai(&mut self.pending, &out);
                }
                self.pending.push_back(encode(None, "[DONE]"));
            }
        }
    }

    /// Tells the client in its own protocol that the stream failed, so its SDK raises an
    /// error instead of treating a truncated reply as complete.
    fn broke(&mut self, message: String) {
        let upstream = self
            .tee
            .draft
            .as_ref()
            .map(|d| d.upstream.clone())
            .unwrap_or_default();
        let message = format!("upstream `{upstream}`: {message}");
        let message = self.tee.state.redactor.text(&message).into_owned();
        tracing::warn!(%message, "stream ended early");
        let client = self
            .tee
            .draft
            .as_ref()
            .map(|d| d.client_protocol)
            .unwrap_or(Protocol::Openai);
        let frame = match client {
            Protocol::Openai => encode(
                None,
                &errors::openai_error(&message, "api_error", Some("upstream_stream_error"))
                    .to_string(),
            ),
            Protocol::Anthropic => encode(
                Some("error"),
                &errors::anthropic_error("api_error", &message).to_string(),
            ),
        };
        self.pending.push_back(frame);
        self.tee.error = Some(message);
    }
}

fn push_anthropic(out: &mut VecDeque<Bytes>, ev: &anthropic::StreamEvent) {
    if let Ok(data) = serde_json::to_string(ev) {
        let name = event_name(&data);
        out.push_back(encode(name.as_deref(), &data));
    }
}

/// Anthropic's `event:` line repeats the JSON `type`; serde writes the tag first, so look there
/// before paying for a parse.
fn event_name(data: &str) -> Option<String> {
    if let Some(rest) = data.strip_prefix("{\"type\":\"")
        && let Some(end) = rest.find('"')
    {
        return Some(rest[..end].to_string());
    }
    serde_json::from_str::<serde_json::Value>(data)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string))
}

fn push_openai(out: &mut VecDeque<Bytes>, chunk: &openai::ChatChunk) {
    if let Ok(data) = serde_json::to_string(chunk) {
        out.push_back(encode(None, &data));
    }
}
