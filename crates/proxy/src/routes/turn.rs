//! `POST /v1/chat/completions` and `POST /v1/messages`: one conversation turn, end to end.

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::time::Instant;

use crate::pipeline::{context, fit, holdout, inbound, query, usage};
use crate::relay::record::Draft;
use crate::relay::{json, stream};
use crate::seams::{Protocol, TurnType};
use crate::state::SharedState;
use crate::{auth, session, upstream};

pub async fn chat_completions(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let resp = turn(&state, Protocol::Openai, headers, body).await;
    state
        .metrics
        .request("chat_completions", resp.status().as_u16());
    resp
}

pub async fn messages(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let resp = turn(&state, Protocol::Anthropic, headers, body).await;
    state.metrics.request("messages", resp.status().as_u16());
    resp
}

async fn turn(state: &SharedState, client: Protocol, headers: HeaderMap, body: Body) -> Response {
    let arrived = Instant::now();
    state.stats.request();
    if let Err(e) = auth::require_key(client, &headers, state.config.api_key.as_deref()) {
        return e.into_response();
    }
    let bytes = match inbound::read_body(client, body, state.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let t_parse = Instant::now();
    let mut map = match inbound::parse(client, &bytes) {
        Ok(m) => m,
        Err(e) => return e.into_response(),
    };
    // The parsed body is all that is needed from here on; a huge body is not held twice.
    drop(bytes);
    let meta = session::resolve(client, &headers, &mut map, &state.default_scope);
    tracing::debug!(session = %meta.session_id, source = ?meta.source, "session resolved");
    state
        .sessions
        .touch(&meta.session_id, &meta.scope, meta.turn_type);
    let wants_stream = map.get("stream").and_then(Value::as_bool) == Some(true);
    let include_usage = map
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true);
    let model = map
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(&state.config.served_model)
        .to_string();
    let mut draft = Draft::new(&meta, client, model.clone(), state.sink.clone(), arrived);

    draft.skill_generation = state.injector.generation();
    let local_query = (meta.turn_type == TurnType::Main && state.local.is_some())
        .then(|| query::retrieval_query(&map));
    // What the block carries, for the trained model's sample (skills and `memory:<id>`s).
    let mut carried: Vec<String> = Vec::new();
    // Only where there is something to hold out: with skills and memory off, no arm exists.
    draft.figures.held_out = meta.turn_type == TurnType::Main
        && state.injector.active()
        && holdout::held_out(&meta.session_id, state.config.holdout);
    if meta.turn_type == TurnType::Main
        && !draft.figures.held_out
        && let Some(injected) = context::inject(state, client, &meta, &model, &mut map).await
    {
        draft.injected_skills = injected.current.skill_names();
        draft.figures.injected_memories = injected.current.memory_ids();
        draft.figures.block_tokens = context::block_tokens(&injected.current);
        draft.figures.injected_tokens = injected.tokens;
        if local_query.is_some() {
            carried.clone_from(&injected.current.skills);
        }
    }
    fit::apply(client, &mut map, state.config.context_window);
    if wants_stream {
        usage::ask_for_stream_usage(client, &mut map);
    }
    let mut request = Value::Object(map);
    draft.overhead = t_parse.elapsed();

    if meta.done {
        // Ended once the reply is recorded, so the end follows the turn in the record.
        draft.end_session = Some(state.sessions.clone());
    }
    if let Some(query) = &local_query {
        let offer = upstream::local::Offer {
            client,
            session_id: &meta.session_id,
            skill_generation: draft.skill_generation,
            query,
            stream: wants_stream,
            // Always, so the turn is recorded with its tokens; the relay keeps the usage
            // chunk from a client that did not ask for it.
            include_usage: true,
            carried: &carried,
            held_out: draft.figures.held_out,
        };
        if let Some(answered) = upstream::local::answer(state, offer, &mut request).await {
            draft.overhead += answered.prep;
            draft.upstream = upstream::local::TRAINED_MODEL.into();
            draft.upstream_protocol = Protocol::Openai;
            draft.request = answered.forwarded.clone();
            return if wants_stream {
                stream::respond(state.clone(), answered, draft, include_usage)
            } else {
                json::respond(state, answered, draft).await
            };
        }
    }
    match upstream::send::send(state, client, &headers, &mut request, false).await {
        Err(unreachable) => {
            draft.overhead += unreachable.prep;
            draft.request = unreachable.forwarded;
            if let Some(u) = state.config.upstreams.get(unreachable.upstream) {
                draft.upstream = u.name.clone();
                draft.upstream_protocol = u.protocol;
            }
            json::fail(state, draft, unreachable.error)
        }
        Ok(answered) => {
            draft.overhead += answered.prep;
            if let Some(u) = state.config.upstreams.get(answered.upstream) {
                draft.upstream = u.name.clone();
                draft.upstream_protocol = u.protocol;
            }
            draft.request = answered.forwarded.clone();
            if wants_stream && answered.response.status().is_success() {
                stream::respond(state.clone(), answered, draft, include_usage)
            } else {
                json::respond(state, answered, draft).await
            }
        }
    }
}
