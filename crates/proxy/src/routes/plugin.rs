//! The API for MetaClaw's plugins inside the agents (OpenClaw's context engine, Claude Code's
//! hooks, Hermes' memory provider), for agents that talk to their provider directly:
//!
//! - `POST /v1/plugin/context` — the block for this session and this user message (skills,
//!   memories, the standing rules), remembered per session and message like the proxy's, so
//!   asking again gives the same bytes and the agent's prompt cache holds;
//! - `POST /v1/plugin/turn` — a finished turn (the user's words, the answer, the tools used):
//!   recorded like a proxied turn and learned from, marked `plugin:<agent>` as its upstream;
//! - `POST /v1/plugin/session_end` — the session ended (learning runs as for `X-Session-Done`).
//!
//! The agent's key as for the agent API, and loopback only, whatever `proxy.host` is: these
//! routes hand out what MetaClaw learned about the user.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, middleware::Next, routing::post};
use bytes::Bytes;
use metaclaw_wire::reader::own_words;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth;
use crate::error::{ApiError, ErrorKind};
use crate::listen::Peer;
use crate::pipeline::{context, holdout, inject};
use crate::seams::{
    EndReason, Injection, Protocol, ReplyCapture, TurnContext, TurnFigures, TurnRecord, TurnType,
};
use crate::state::SharedState;

/// Longest text accepted in one field (a pasted log is fine; a runaway plugin is not).
const MAX_TEXT: usize = 1 << 20;

pub fn router() -> Router<SharedState> {
    Router::new()
        .route("/v1/plugin/context", post(context_route))
        .route("/v1/plugin/turn", post(turn_route))
        .route("/v1/plugin/session_end", post(session_end_route))
}

/// What a plugin route does with its body; the admin API serves the same under `/api/plugin/`
/// for plugins that hold the admin token rather than the agent key (Claude Code's hooks run
/// the `metaclaw` binary, which reads the token from the run files and never a keychain).
pub async fn answer(state: SharedState, route: PluginRoute, body: Bytes) -> Response {
    match route {
        PluginRoute::Context => context(state, body).await,
        PluginRoute::Turn => turn(state, body).await,
        PluginRoute::SessionEnd => session_end(state, body),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginRoute {
    Context,
    Turn,
    SessionEnd,
}

async fn context_route(State(state): State<SharedState>, body: Bytes) -> Response {
    context(state, body).await
}

async fn turn_route(State(state): State<SharedState>, body: Bytes) -> Response {
    turn(state, body).await
}

async fn session_end_route(State(state): State<SharedState>, body: Bytes) -> Response {
    session_end(state, body)
}

/// Whether `req` came over a loopback connection.
pub fn from_loopback(req: &Request) -> bool {
    req.extensions()
        .get::<Peer>()
        .is_some_and(|p| p.0.ip().is_loopback())
}

/// The refusal of a request from beyond loopback.
pub fn not_local() -> Response {
    refuse(
        StatusCode::FORBIDDEN,
        ErrorKind::Permission,
        "the plugin API answers on loopback only",
    )
}

/// The agent key and a loopback peer, in front of every plugin route.
pub async fn gate(State(state): State<SharedState>, req: Request, next: Next) -> Response {
    if !from_loopback(&req) {
        return not_local();
    }
    if let Err(e) = auth::require_key(
        Protocol::Openai,
        req.headers(),
        state.config.api_key.as_deref(),
    ) {
        return e.into_response();
    }
    next.run(req).await
}

fn refuse(status: StatusCode, kind: ErrorKind, message: &str) -> Response {
    ApiError::new(Protocol::Openai, status, kind, message).into_response()
}

fn bad(message: String) -> Response {
    refuse(StatusCode::BAD_REQUEST, ErrorKind::InvalidRequest, &message)
}

#[derive(Debug, Deserialize)]
struct ContextAsk {
    session_id: String,
    agent: String,
    /// The user's own words for this turn.
    prompt: String,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Debug, Deserialize)]
struct TurnTold {
    session_id: String,
    agent: String,
    user: String,
    #[serde(default)]
    assistant: String,
    #[serde(default)]
    model: Option<String>,
    /// Names of the tools the agent ran for this turn.
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SessionEnd {
    session_id: String,
}

/// A JSON body of `T`, or the reason it is not one, in words.
fn parse<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, String> {
    serde_json::from_slice(body).map_err(|e| format!("the body is not what this route takes: {e}"))
}

fn check(field: &str, text: &str, required: bool) -> Result<(), String> {
    if required && text.trim().is_empty() {
        return Err(format!("`{field}` must not be empty"));
    }
    if text.len() > MAX_TEXT {
        return Err(format!("`{field}` is longer than {MAX_TEXT} bytes"));
    }
    Ok(())
}

/// The key a message's block is remembered under: the same as the proxy's for a message with
/// these words, so a conversation moved between proxy and plugin keeps its blocks.
fn key_of(prompt: &str) -> String {
    inject::message_key(&json!({ "content": prompt }))
}

async fn context(state: SharedState, body: Bytes) -> Response {
    let mut ask: ContextAsk = match parse(&body) {
        Ok(a) => a,
        Err(m) => return bad(m),
    };
    for (field, text) in [
        ("session_id", &ask.session_id),
        ("agent", &ask.agent),
        ("prompt", &ask.prompt),
    ] {
        if let Err(r) = check(field, text, true) {
            return bad(r);
        }
    }
    // The user's words, whatever envelope the agent kept around them (stamps, metadata).
    ask.prompt = own_words(&ask.prompt);
    let scope = ask
        .scope
        .clone()
        .unwrap_or_else(|| state.default_scope.clone());
    state
        .sessions
        .touch(&ask.session_id, &scope, TurnType::Main);
    let held_out =
        state.injector.active() && holdout::held_out(&ask.session_id, state.config.holdout);
    let injection = if held_out || !state.injector.active() {
        Arc::new(Injection::default())
    } else {
        block_for(&state, &ask.session_id, &scope, &ask.prompt).await
    };
    let block = if injection.is_empty() {
        String::new()
    } else {
        inject::delimit(&injection.block)
    };
    Json(json!({
        "block": block,
        "skills": injection.skill_names(),
        "memories": injection.memory_ids(),
        "held_out": held_out,
        "tokens": context::block_tokens(&injection),
    }))
    .into_response()
}

/// The block remembered for this message, or a fresh one (remembered from then on).
async fn block_for(
    state: &SharedState,
    session_id: &str,
    scope: &str,
    prompt: &str,
) -> Arc<Injection> {
    let key = key_of(prompt);
    let session = state.sticky.session(session_id);
    let found = state
        .sticky
        .recall(session_id, &session, std::slice::from_ref(&key))
        .await;
    if let Some(Some(kept)) = found.into_iter().next() {
        return kept;
    }
    let turn = TurnContext {
        session_id: session_id.to_owned(),
        scope: scope.to_owned(),
        client_protocol: Protocol::Openai,
        model: state.config.served_model.clone(),
        query: prompt.to_owned(),
    };
    let fresh = state
        .injector
        .context_block(&turn)
        .await
        .unwrap_or_default();
    state.sticky.remember(session_id, &session, &key, fresh)
}

async fn turn(state: SharedState, body: Bytes) -> Response {
    let mut told: TurnTold = match parse(&body) {
        Ok(t) => t,
        Err(m) => return bad(m),
    };
    for (field, text, required) in [
        ("session_id", &told.session_id, true),
        ("agent", &told.agent, true),
        ("user", &told.user, true),
        ("assistant", &told.assistant, false),
    ] {
        if let Err(r) = check(field, text, required) {
            return bad(r);
        }
    }
    told.user = own_words(&told.user);
    if told.user.is_empty() {
        return bad("`user` holds only the agent's envelope, none of the user's words".into());
    }
    let scope = told
        .scope
        .clone()
        .unwrap_or_else(|| state.default_scope.clone());
    state
        .sessions
        .touch(&told.session_id, &scope, TurnType::Main);
    // What this message was given, if the plugin asked (held-out sessions were given nothing).
    let session = state.sticky.session(&told.session_id);
    let given = state
        .sticky
        .recall(&told.session_id, &session, &[key_of(&told.user)])
        .await
        .into_iter()
        .next()
        .flatten()
        .unwrap_or_default();
    let model = told
        .model
        .clone()
        .unwrap_or_else(|| state.config.served_model.clone());
    let (request, reply) = as_chat(&told, &model);
    let record = TurnRecord {
        session_id: told.session_id.clone(),
        turn_type: TurnType::Main,
        scope,
        client_protocol: Protocol::Openai,
        upstream_protocol: Protocol::Openai,
        upstream: format!("plugin:{}", told.agent),
        model,
        request,
        reply: ReplyCapture::Json(reply),
        status: 200,
        error: None,
        overhead_ms: 0.0,
        ttft_ms: None,
        total_ms: 0.0,
        started_at: SystemTime::now(),
        skill_generation: state.injector.generation(),
        injected_skills: given.skill_names(),
        figures: TurnFigures {
            injected_memories: given.memory_ids(),
            injected_tokens: context::block_tokens(&given),
            block_tokens: context::block_tokens(&given),
            upstream_usage: None,
            held_out: holdout::held_out(&told.session_id, state.config.holdout),
        },
    };
    state.sink.turn_finished(record);
    Json(json!({"recorded": true})).into_response()
}

/// The turn as the chat request and reply learning reads: the user's words (with the block
/// they were given, as the provider saw it) and the answer, with the tools it called.
fn as_chat(told: &TurnTold, model: &str) -> (Bytes, Bytes) {
    let request = json!({
        "model": model,
        "messages": [{"role": "user", "content": told.user}],
    });
    let mut message = json!({"role": "assistant", "content": told.assistant});
    if !told.tools.is_empty() {
        message["tool_calls"] = Value::Array(
            told.tools
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    json!({"id": format!("call_{i}"), "type": "function",
                           "function": {"name": name, "arguments": "{}"}})
                })
                .collect(),
        );
    }
    let reply = json!({
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    });
    (
        Bytes::from(request.to_string()),
        Bytes::from(reply.to_string()),
    )
}

fn session_end(state: SharedState, body: Bytes) -> Response {
    let end: SessionEnd = match parse(&body) {
        Ok(e) => e,
        Err(m) => return bad(m),
    };
    if let Err(m) = check("session_id", &end.session_id, true) {
        return bad(m);
    }
    state.sessions.end(&end.session_id, EndReason::Explicit);
    Json(json!({"ended": true})).into_response()
}
