//! Weaver's REST routes: sessions, models, operations queued per model, sampling sessions,
//! and operation polling (`GET /api/v1/operations/{id}`).

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::guard::error;
use super::ops;
use super::state::{FutureScript, Job, JobResult, Shared, lock};

type S = State<Arc<Shared>>;

fn parse(body: &Bytes) -> Value {
    serde_json::from_slice(body).unwrap_or(Value::Null)
}

pub(crate) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/api/v1/sessions", post(create_session))
        .route("/api/v1/sessions/{id}/heartbeat", post(heartbeat))
        .route("/api/v1/sessions/{id}/models", post(create_model))
        .route(
            "/api/v1/sessions/{id}/sampling-sessions",
            post(create_sampling_session),
        )
        .route(
            "/api/v1/models/{id}/forward-backward-passes",
            post(|s: S, p: Path<String>, b: Bytes| training(s, p, b, "forward_backward")),
        )
        .route(
            "/api/v1/models/{id}/optimizer-steps",
            post(|s: S, p: Path<String>, b: Bytes| training(s, p, b, "optim_step")),
        )
        .route(
            "/api/v1/models/{id}/export-sampler",
            post(|s: S, p: Path<String>, b: Bytes| training(s, p, b, "save_weights_for_sampler")),
        )
        .route("/api/v1/models/{id}/checkpoints", post(checkpoint))
        .route("/api/v1/models/{id}/load", post(load))
        .route("/api/v1/sampling-sessions/{id}/samples", post(samples))
        .route("/api/v1/operations/{id}", get(operation))
}

async fn create_session(State(s): S) -> Json<Value> {
    let mut w = lock(&s.world);
    let id = w.next_id("wsession");
    w.sessions.insert(id.clone(), 0);
    Json(json!({"id": id, "status": "active"}))
}

async fn heartbeat(State(s): S, Path(id): Path<String>) -> Response {
    let mut w = lock(&s.world);
    if let Some(n) = w.sessions.get_mut(&id) {
        *n += 1;
        return Json(json!({"id": id})).into_response();
    }
    let (status, msg) = w.session_error(&id);
    error(
        StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND),
        msg,
    )
}

async fn create_model(State(s): S, Path(session): Path<String>, body: Bytes) -> Response {
    let body = parse(&body);
    let mut w = lock(&s.world);
    if !w.sessions.contains_key(&session) {
        let (status, msg) = w.session_error(&session);
        return error(
            StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND),
            msg,
        );
    }
    let model_id = w.next_id("wmodel");
    match ops::create_model(&mut w, &s.opts, model_id.clone(), &body) {
        Ok(()) => (
            StatusCode::CREATED,
            Json(json!({"id": model_id, "base_model": body.get("base_model")})),
        )
            .into_response(),
        Err(e) => error(StatusCode::BAD_REQUEST, e),
    }
}

fn operation_handle(id: &str) -> Value {
    json!({"id": id, "status": "pending"})
}

async fn training(
    State(s): S,
    Path(model_id): Path<String>,
    body: Bytes,
    op: &'static str,
) -> Response {
    let body = parse(&body);
    // Training operations wrap their body in `payload`; export-sampler does not.
    let inner = body.get("payload").cloned().unwrap_or(body);
    let script = s.take_script(op);
    let mut w = lock(&s.world);
    let job = Job {
        result: JobResult::Waiting,
        script,
        polls: 0,
    };
    match ops::submit_training(&mut w, &s.opts, "weaver", &model_id, op, &inner, job) {
        Ok(id) => (StatusCode::ACCEPTED, Json(operation_handle(&id))).into_response(),
        Err((status, msg)) => error(
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            msg,
        ),
    }
}

async fn checkpoint(State(s): S, Path(model_id): Path<String>, body: Bytes) -> Response {
    let body = parse(&body);
    let script = s.take_script("save_weights");
    let mut w = lock(&s.world);
    let result = ops::run(&mut w, &s.opts, "weaver", &model_id, "save_weights", &body);
    let path = result
        .as_ref()
        .ok()
        .and_then(|v| v.get("path").cloned())
        .unwrap_or(Value::Null);
    let id = w.next_id("op");
    w.jobs.insert(id.clone(), ops::job(result, script));
    Json(json!({"checkpoint": {"path": path, "name": body.get("name")}, "operation": operation_handle(&id)})).into_response()
}

async fn load(State(s): S, Path(model_id): Path<String>, body: Bytes) -> Response {
    let body = parse(&body);
    let script = s.take_script("load_weights");
    let mut w = lock(&s.world);
    let result = ops::run(&mut w, &s.opts, "weaver", &model_id, "load_weights", &body);
    let id = w.next_id("op");
    w.jobs.insert(id.clone(), ops::job(result, script));
    (StatusCode::ACCEPTED, Json(operation_handle(&id))).into_response()
}

async fn create_sampling_session(
    State(s): S,
    Path(session): Path<String>,
    body: Bytes,
) -> Response {
    let body = parse(&body);
    let mut w = lock(&s.world);
    if !w.sessions.contains_key(&session) {
        let (status, msg) = w.session_error(&session);
        return error(
            StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND),
            msg,
        );
    }
    match ops::create_sampler(&mut w, s.opts.vocab_size, &body) {
        Ok(id) => (StatusCode::CREATED, Json(json!({"id": id}))).into_response(),
        Err(e) => error(StatusCode::BAD_REQUEST, e),
    }
}

async fn samples(State(s): S, Path(sampler): Path<String>, body: Bytes) -> Response {
    let body = parse(&body);
    let script = s.take_script("sample");
    let mut w = lock(&s.world);
    let result = ops::sample(&mut w, &s.opts, &sampler, None, &body);
    let id = w.next_id("op");
    w.jobs.insert(id.clone(), ops::job(result, script));
    (StatusCode::ACCEPTED, Json(operation_handle(&id))).into_response()
}

async fn operation(State(s): S, Path(id): Path<String>) -> Response {
    let mut w = lock(&s.world);
    let Some(job) = w.jobs.get_mut(&id) else {
        return error(StatusCode::NOT_FOUND, format!("unknown operation {id}"));
    };
    job.polls += 1;
    let running = Json(json!({"id": id, "status": "running"})).into_response();
    match &job.script {
        Some(FutureScript::Expired) => {
            return error(StatusCode::GONE, "the operation expired".into());
        }
        Some(FutureScript::TryAgain(n) | FutureScript::Timeout408(n)) if job.polls <= *n => {
            return running;
        }
        Some(FutureScript::Hold) => return running,
        Some(FutureScript::Fail { message, .. }) => {
            return Json(json!({"id": id, "status": "error", "error_code": "failed", "error_message": message})).into_response();
        }
        _ => {}
    }
    match &job.result {
        JobResult::Waiting => running,
        JobResult::Done(v) => Json(json!({"id": id, "status": "done", "response": v})).into_response(),
        JobResult::Failed { message, .. } => {
            Json(json!({"id": id, "status": "error", "error_code": "invalid_request", "error_message": message})).into_response()
        }
    }
}
