//! Test-control routes under `/_fake/` (no key needed), so a fake running as a separate
//! process (`fake-tinker`) can be scripted and inspected over HTTP:
//!
//! - `POST /_fake/faults` `{"path", "status", "retry_after"?, "times"?}` or
//!   `{"path", "disconnect": true | "after_processing"}`;
//! - `POST /_fake/scripts` `{"op", "try_again": N | "timeout_408": N | "expired": true |
//!   "hold": true | "fail": {"message", "category"}}`, and `POST /_fake/release` (ends
//!   every hold);
//! - `POST /_fake/completions` `{"tokens": [...]}`;
//! - `GET /_fake/requests` (every recorded request) and `GET /_fake/state` (models,
//!   heartbeats per session, idempotent replays).

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::guard::error;
use super::state::{Fault, FutureScript, Shared, lock};

type S = State<Arc<Shared>>;

pub(crate) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/_fake/faults", post(faults))
        .route("/_fake/scripts", post(scripts))
        .route("/_fake/completions", post(completions))
        .route("/_fake/release", post(release))
        .route("/_fake/requests", get(requests))
        .route("/_fake/state", get(state))
}

fn bad(msg: &str) -> Response {
    error(StatusCode::BAD_REQUEST, msg.to_owned())
}

async fn faults(State(s): S, Json(body): Json<Value>) -> Response {
    let path = body
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or("*")
        .to_owned();
    let times = body.get("times").and_then(Value::as_u64).unwrap_or(1);
    let fault = match (
        body.get("disconnect"),
        body.get("status").and_then(Value::as_u64),
    ) {
        (Some(Value::String(w)), _) if w == "after_processing" => Fault::DisconnectAfterProcessing,
        (Some(Value::Bool(true)), _) => Fault::Disconnect,
        (_, Some(status)) => Fault::Status {
            status: u16::try_from(status).unwrap_or(500),
            retry_after: body
                .get("retry_after")
                .and_then(Value::as_u64)
                .and_then(|r| u32::try_from(r).ok()),
        },
        _ => return bad("give `status` or `disconnect`"),
    };
    let mut q = lock(&s.faults);
    for _ in 0..times {
        q.push_back((path.clone(), fault.clone()));
    }
    Json(json!({"queued": q.len()})).into_response()
}

async fn scripts(State(s): S, Json(body): Json<Value>) -> Response {
    let op = body
        .get("op")
        .and_then(Value::as_str)
        .unwrap_or("*")
        .to_owned();
    let n = |k: &str| {
        body.get(k)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    let script = if let Some(n) = n("try_again") {
        FutureScript::TryAgain(n)
    } else if let Some(n) = n("timeout_408") {
        FutureScript::Timeout408(n)
    } else if body.get("hold") == Some(&Value::Bool(true)) {
        FutureScript::Hold
    } else if body.get("expired") == Some(&Value::Bool(true)) {
        FutureScript::Expired
    } else if let Some(f) = body.get("fail") {
        FutureScript::Fail {
            message: f
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("failed")
                .to_owned(),
            category: f
                .get("category")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_owned(),
        }
    } else {
        return bad("give try_again, timeout_408, hold, expired or fail");
    };
    lock(&s.scripts).push_back((op, script));
    Json(json!({"ok": true})).into_response()
}

async fn release(State(s): S) -> Json<Value> {
    Json(json!({"released": super::release_holds(&s)}))
}

async fn completions(State(s): S, Json(body): Json<Value>) -> Response {
    let Some(tokens) = body.get("tokens").and_then(Value::as_array).and_then(|a| {
        a.iter()
            .map(|t| t.as_u64().and_then(|t| u32::try_from(t).ok()))
            .collect::<Option<Vec<u32>>>()
    }) else {
        return bad("give `tokens` as a list of token ids");
    };
    lock(&s.world).canned.push_back(tokens);
    Json(json!({"ok": true})).into_response()
}

async fn requests(State(s): S) -> Json<Value> {
    Json(serde_json::to_value(&*lock(&s.requests)).unwrap_or(Value::Null))
}

async fn state(State(s): S) -> Json<Value> {
    let w = lock(&s.world);
    let models: serde_json::Map<String, Value> = w
        .models
        .iter()
        .map(|(id, m)| {
            (
                id.clone(),
                serde_json::to_value(&m.state).unwrap_or(Value::Null),
            )
        })
        .collect();
    Json(json!({"models": models, "heartbeats": w.sessions, "idempotent_replays": w.replays}))
}
