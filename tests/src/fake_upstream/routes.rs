//! HTTP routes: the two model APIs, `/v1/models`, and the control routes used by tests written
//! in other languages (`/_requests`, `/_faults`, `/_stats`).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};

use super::errors::{self, ErrorKind, Protocol};
use super::fault::Fault;
use super::learner;
use super::reply::{self, Reply, ReplyContent};
use super::sse::{self, SSE_CONTENT_TYPE, StreamPlan};
use super::state::{RecordedRequest, Shared};
use super::{anthropic, openai, prefix_cache};

/// Real providers accept large prompts; the proxy's own limit is what tests exercise.
const BODY_LIMIT: usize = 64 << 20;

pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/messages", post(messages))
        .route("/v1/messages/count_tokens", post(count_tokens))
        .route("/v1/embeddings", post(embeddings))
        .route("/v1/models", get(models))
        .route("/_requests", get(list_requests).delete(clear_requests))
        .route("/_faults", post(push_faults).delete(clear_faults))
        .route("/_stats", get(stats))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(shared)
}

type Shr = State<Arc<Shared>>;

async fn chat_completions(
    State(s): Shr,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    model_request(s, Protocol::OpenAi, &method, &uri, &headers, &body).await
}

async fn messages(
    State(s): Shr,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    model_request(s, Protocol::Anthropic, &method, &uri, &headers, &body).await
}

async fn embeddings(
    State(s): Shr,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(resp) = admit(&s, Protocol::OpenAi, &method, &uri, &headers, &body) {
        return resp;
    }
    s.count_embedding_request();
    let value = match parse(Protocol::OpenAi, &body) {
        Ok(v) => v,
        Err(resp) => return resp,
    };
    super::embeddings::respond(&s, &value).await
}

async fn count_tokens(
    State(s): Shr,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(resp) = admit(&s, Protocol::Anthropic, &method, &uri, &headers, &body) {
        return resp;
    }
    let value = match parse(Protocol::Anthropic, &body) {
        Ok(v) => v,
        Err(resp) => return resp,
    };
    if let Err(msg) = anthropic::validate(&value, true) {
        return errors::error_response(Protocol::Anthropic, ErrorKind::InvalidRequest, &msg);
    }
    let conv = anthropic::conversation(&value);
    Json(json!({ "input_tokens": reply::prompt_tokens(conv.prompt_chars) })).into_response()
}

async fn models(State(s): Shr, method: Method, uri: Uri, headers: HeaderMap) -> Response {
    if !s.opts.fast {
        s.record(RecordedRequest::new(&method, &uri, &headers, &[]));
    }
    let proto = if headers.contains_key("x-api-key") {
        Protocol::Anthropic
    } else {
        Protocol::OpenAi
    };
    if !authorized(&s, proto, &headers) {
        return unauthorized(proto);
    }
    Json(openai::models()).into_response()
}

/// Counts, records and authenticates a model request.
#[allow(clippy::result_large_err, reason = "the error is the response to send")]
fn admit(
    s: &Shared,
    proto: Protocol,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), Response> {
    s.count_request();
    if !s.opts.fast {
        s.record(RecordedRequest::new(method, uri, headers, body));
    }
    if !authorized(s, proto, headers) {
        return Err(unauthorized(proto));
    }
    if proto == Protocol::Anthropic && !s.opts.fast && !headers.contains_key("anthropic-version") {
        return Err(errors::error_response(
            proto,
            ErrorKind::InvalidRequest,
            "anthropic-version: header is required",
        ));
    }
    Ok(())
}

fn authorized(s: &Shared, proto: Protocol, headers: &HeaderMap) -> bool {
    let Some(key) = &s.opts.api_key else {
        return true;
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    match proto {
        Protocol::OpenAi => header("authorization")
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|v| v == key),
        Protocol::Anthropic => header("x-api-key").is_some_and(|v| v == key),
    }
}

/// The credential a request came with (either protocol's header), for the cache key.
fn credential(headers: &HeaderMap) -> String {
    ["authorization", "x-api-key"]
        .iter()
        .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
        .unwrap_or("")
        .trim_start_matches("Bearer ")
        .to_owned()
}

/// The error an error fault answers with; the echoing 401 quotes the request's credential.
fn fault_answer(proto: Protocol, fault: Fault, headers: &HeaderMap) -> Option<Response> {
    if fault != Fault::UnauthorizedEcho {
        return errors::fault_response(proto, fault);
    }
    let sent = ["authorization", "x-api-key"]
        .iter()
        .filter_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
        .collect::<Vec<_>>()
        .join(", ");
    let msg = format!("Invalid credentials in request: {sent}");
    Some(errors::error_response(
        proto,
        ErrorKind::Authentication,
        &msg,
    ))
}

fn unauthorized(proto: Protocol) -> Response {
    let msg = match proto {
        Protocol::OpenAi => "Incorrect API key provided.",
        Protocol::Anthropic => "invalid x-api-key",
    };
    errors::error_response(proto, ErrorKind::Authentication, msg)
}

#[allow(clippy::result_large_err, reason = "the error is the response to send")]
fn parse(proto: Protocol, body: &[u8]) -> Result<Value, Response> {
    serde_json::from_slice(body).map_err(|e| {
        let msg = format!("We could not parse the JSON body of your request: {e}");
        errors::error_response(proto, ErrorKind::InvalidRequest, &msg)
    })
}

async fn model_request(
    s: Arc<Shared>,
    proto: Protocol,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    if let Err(resp) = admit(&s, proto, method, uri, headers, body) {
        return resp;
    }
    if s.opts.fast {
        return fast_reply(s, proto, body);
    }
    let value = match parse(proto, body) {
        Ok(v) => v,
        Err(resp) => return resp,
    };
    let checked = match proto {
        Protocol::OpenAi => openai::validate(&value),
        Protocol::Anthropic => anthropic::validate(&value, false),
    };
    if let Err(msg) = checked {
        return errors::error_response(proto, ErrorKind::InvalidRequest, &msg);
    }
    let conv = match proto {
        Protocol::OpenAi => openai::conversation(&value),
        Protocol::Anthropic => anthropic::conversation(&value),
    };
    if proto == Protocol::OpenAi
        && s.rejects_response_format()
        && let Some(format) = value.get("response_format")
    {
        let ty = format.get("type").and_then(Value::as_str).unwrap_or("?");
        let msg = format!(
            "Invalid parameter: 'response_format' of type '{ty}' is not supported with this model."
        );
        return errors::error_response(proto, ErrorKind::InvalidRequest, &msg);
    }
    let queued = s.pop_fault();
    // An error fault answers before a scripted reply is taken, so the script survives it.
    if let Some(resp) = queued.and_then(|f| fault_answer(proto, f, headers)) {
        return resp;
    }
    let learned = || {
        let raw = String::from_utf8_lossy(body);
        if s.prose_for_structured() && learner::wants_json(&value, &raw) {
            return Some(learner::PROSE.to_owned());
        }
        learner::answer(
            &value,
            &raw,
            &conv.newest_user_text,
            &s.tasks(),
            s.lesson_style(),
        )
    };
    let (reply, fault) = match s.pop_reply().or_else(learned) {
        Some(text) => (reply::scripted(&conv, text), queued),
        None => {
            let (reply, marker) = reply::decide(&conv);
            // A queued fault wins over a marker in the text.
            (reply, queued.or(marker))
        }
    };
    if let Some(resp) = fault.and_then(|f| fault_answer(proto, f, headers)) {
        return resp;
    }
    if let Err(resp) = delay_for(&s, proto, fault).await {
        return resp;
    }
    let model = value
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake-model");
    let stream = value
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let reply = match &s.prefix_cache {
        Some(cache) => {
            let used = cache.account(
                proto,
                &prefix_cache::key(&credential(headers), &value),
                &value,
            );
            Reply {
                prompt_tokens: used.prompt,
                cache: Some(used),
                ..reply
            }
        }
        None => reply,
    };
    let n = s.next_id();
    let out = Rendered::new(
        proto,
        model,
        n,
        &reply,
        stream.then(|| openai::include_usage(&value)),
    );
    out.respond(s, fault)
}

/// Applies the timing faults before the response starts: `Hang` never answers (until
/// shutdown), `SlowFirstByte` waits.
#[allow(clippy::result_large_err, reason = "the error is the response to send")]
pub(super) async fn delay_for(
    s: &Shared,
    proto: Protocol,
    fault: Option<Fault>,
) -> Result<(), Response> {
    match fault {
        Some(Fault::Hang) => {
            s.shutdown.cancelled().await;
            Err(errors::error_response(
                proto,
                ErrorKind::Server,
                "shutting down",
            ))
        }
        Some(Fault::SlowFirstByte(d)) => {
            tokio::select! {
                () = tokio::time::sleep(d) => {}
                () = s.shutdown.cancelled() => {}
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A reply rendered in one protocol, streamed or whole.
struct Rendered {
    proto: Protocol,
    request_id: String,
    body: RenderedBody,
}

enum RenderedBody {
    Whole(Value),
    Frames(Vec<Bytes>),
}

impl Rendered {
    /// `stream` is `Some(include_usage)` for a streamed reply.
    fn new(proto: Protocol, model: &str, n: u64, reply: &Reply, stream: Option<bool>) -> Self {
        let body = match (proto, stream) {
            (Protocol::OpenAi, s) => {
                let ids = openai::Ids::new(n, unix_now());
                match s {
                    Some(usage) => {
                        RenderedBody::Frames(openai::stream_frames(model, &ids, reply, usage))
                    }
                    None => RenderedBody::Whole(openai::completion(model, &ids, reply)),
                }
            }
            (Protocol::Anthropic, s) => {
                let ids = anthropic::Ids::new(n);
                match s {
                    Some(_) => RenderedBody::Frames(anthropic::stream_frames(model, &ids, reply)),
                    None => RenderedBody::Whole(anthropic::message(model, &ids, reply)),
                }
            }
        };
        Self {
            proto,
            request_id: format!("req_fake{n}"),
            body,
        }
    }

    fn respond(self, s: Arc<Shared>, fault: Option<Fault>) -> Response {
        let id_header = match self.proto {
            Protocol::OpenAi => "x-request-id",
            Protocol::Anthropic => "request-id",
        };
        let headers = [(id_header, self.request_id)];
        match self.body {
            RenderedBody::Frames(frames) => {
                let (keep, malformed) = match self.proto {
                    Protocol::OpenAi => (openai::KEEP_FRAMES, openai::malformed_frame()),
                    Protocol::Anthropic => (anthropic::KEEP_FRAMES, anthropic::malformed_frame()),
                };
                let plan = StreamPlan::new(frames).with_fault(fault, keep, malformed);
                sse::streamed_response(s, SSE_CONTENT_TYPE, &headers, plan)
            }
            RenderedBody::Whole(value) => {
                let text = value.to_string();
                // Faults need a hand-made body; a normal reply has a Content-Length like the real APIs.
                let plan = match fault {
                    // Half a JSON document, then the connection drops.
                    Some(Fault::DisconnectMidStream) => {
                        let half = text.len() / 2;
                        let mut plan =
                            StreamPlan::new(vec![Bytes::copy_from_slice(&text.as_bytes()[..half])]);
                        plan.disconnect_after = Some(1);
                        plan
                    }
                    Some(Fault::MalformedSse) => {
                        StreamPlan::new(vec![Bytes::from_static(b"{\"id\": not json")])
                    }
                    Some(Fault::ChunkDelay(d)) => {
                        let half = text.len() / 2;
                        let mut plan = StreamPlan::new(vec![
                            Bytes::copy_from_slice(&text.as_bytes()[..half]),
                            Bytes::copy_from_slice(&text.as_bytes()[half..]),
                        ]);
                        plan.delay = Some(d);
                        plan
                    }
                    _ => {
                        let mut resp = Json(value).into_response();
                        if let Ok(v) = headers[0].1.parse() {
                            resp.headers_mut().insert(id_header, v);
                        }
                        return resp;
                    }
                };
                sse::streamed_response(s, "application/json", &headers, plan)
            }
        }
    }
}

/// Benchmark mode: a fixed short reply; only `model`, `stream` and `include_usage` are read.
fn fast_reply(s: Arc<Shared>, proto: Protocol, body: &[u8]) -> Response {
    #[derive(Deserialize)]
    struct FastRequest {
        #[serde(default)]
        model: String,
        #[serde(default)]
        stream: bool,
        #[serde(default)]
        stream_options: Option<FastStreamOptions>,
    }
    #[derive(Deserialize)]
    struct FastStreamOptions {
        #[serde(default)]
        include_usage: bool,
    }
    let req: FastRequest = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => {
            let msg = format!("We could not parse the JSON body of your request: {e}");
            return errors::error_response(proto, ErrorKind::InvalidRequest, &msg);
        }
    };
    let reply = Reply {
        content: ReplyContent::Text("Echo: benchmark reply".into()),
        prompt_tokens: 8,
        cache: None,
        completion_tokens: 3,
    };
    let usage = req.stream_options.is_some_and(|o| o.include_usage);
    let gap = s
        .opts
        .chunk_gap
        .filter(|_| req.stream)
        .map(Fault::ChunkDelay);
    let out = Rendered::new(
        proto,
        &req.model,
        s.next_id(),
        &reply,
        req.stream.then_some(usage),
    );
    out.respond(s, gap)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

async fn list_requests(State(s): Shr) -> Response {
    Json(s.requests()).into_response()
}

async fn clear_requests(State(s): Shr) -> StatusCode {
    s.clear_requests();
    StatusCode::NO_CONTENT
}

/// Body: a JSON list of fault strings, e.g. `["429", "chunk_delay:50"]`, applied one per
/// following model request.
async fn push_faults(State(s): Shr, body: Bytes) -> Response {
    match serde_json::from_slice::<Vec<Fault>>(&body) {
        Ok(faults) => {
            s.push_faults(faults);
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, format!("bad fault list: {e}")).into_response(),
    }
}

async fn clear_faults(State(s): Shr) -> StatusCode {
    s.clear_faults();
    StatusCode::NO_CONTENT
}

async fn stats(State(s): Shr) -> Response {
    Json(s.stats()).into_response()
}

async fn not_found(uri: Uri) -> Response {
    let msg = format!("Unknown request URL: {}", uri.path());
    errors::error_response(Protocol::OpenAi, ErrorKind::NotFound, &msg)
}
