//! The Tinker JSON routes (also MinT's), and the file route of the fake Hugging Face hub.

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
use super::state::{FutureScript, JobResult, Shared, lock};

type S = State<Arc<Shared>>;

fn parse(body: &Bytes) -> Value {
    serde_json::from_slice(body).unwrap_or(Value::Null)
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let training = |op: &'static str| post(move |s: S, b: Bytes| submit_training(s, b, op));
    Router::new()
        .route(
            "/api/v1/healthz",
            get(|| async { Json(json!({"status": "ok"})) }),
        )
        .route("/api/v1/get_server_capabilities", get(capabilities))
        .route("/api/v1/client/config", post(client_config))
        .route("/api/v1/auth/token", post(auth_token))
        .route("/api/v1/create_session", post(create_session))
        .route("/api/v1/session_heartbeat", post(heartbeat))
        .route("/api/v1/create_model", post(create_model))
        .route("/api/v1/forward_backward", training("forward_backward"))
        .route("/api/v1/forward", training("forward"))
        .route("/api/v1/optim_step", training("optim_step"))
        .route("/api/v1/save_weights", training("save_weights"))
        .route(
            "/api/v1/save_weights_for_sampler",
            training("save_weights_for_sampler"),
        )
        .route("/api/v1/load_weights", training("load_weights"))
        .route(
            "/api/v1/create_sampling_session",
            post(create_sampling_session),
        )
        .route("/api/v1/asample", post(asample))
        .route("/api/v1/retrieve_future", post(retrieve_future))
        .route("/hf/{*path}", get(hf_file))
        .merge(super::weaver::router())
        .merge(super::admin::router())
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            super::guard::guard,
        ))
        .with_state(shared)
}

async fn capabilities(State(s): S) -> Json<Value> {
    let models: Vec<Value> = s
        .opts
        .supported_models
        .iter()
        .map(|m| json!({"model_name": m}))
        .collect();
    Json(json!({"supported_models": models}))
}

async fn client_config(State(s): S) -> Json<Value> {
    let mut flags = json!({"pjwt_auth_enabled": s.opts.jwt});
    if let Some(n) = s.opts.max_chunk_len {
        flags["fwdbwd_max_chunk_len"] = json!(n);
    }
    Json(flags)
}

async fn auth_token(State(s): S) -> Response {
    if !s.opts.jwt {
        return error(StatusCode::NOT_FOUND, "JWT auth is off".into());
    }
    let mut w = lock(&s.world);
    let token = format!("eyJhbGciOiJub25lIn0.{}.", w.next_id("jwt"));
    w.issued_jwt = Some(token.clone());
    Json(json!({"jwt": token})).into_response()
}

async fn create_session(State(s): S) -> Json<Value> {
    let mut w = lock(&s.world);
    let id = w.next_id("session");
    w.sessions.insert(id.clone(), 0);
    Json(json!({"session_id": id}))
}

async fn heartbeat(State(s): S, body: Bytes) -> Response {
    let body = parse(&body);
    let id = body.get("session_id").and_then(Value::as_str).unwrap_or("");
    let mut w = lock(&s.world);
    if let Some(n) = w.sessions.get_mut(id) {
        *n += 1;
        return Json(json!({})).into_response();
    }
    let (status, msg) = w.session_error(id);
    error(
        StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND),
        msg,
    )
}

fn future(id: &str, model_id: Option<&str>) -> Response {
    let mut v = json!({"request_id": id});
    if let Some(m) = model_id {
        v["model_id"] = json!(m);
    }
    Json(v).into_response()
}

async fn create_model(State(s): S, body: Bytes) -> Response {
    let body = parse(&body);
    let script = s.take_script("create_model");
    let mut w = lock(&s.world);
    let session = body
        .get("session_id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if !w.sessions.contains_key(&session) {
        let (status, msg) = w.session_error(&session);
        return error(
            StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND),
            msg,
        );
    }
    let seq = body
        .get("model_seq_id")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let model_id = format!("{session}:train:{seq}");
    let result = ops::create_model(&mut w, &s.opts, model_id.clone(), &body)
        .map(|()| json!({"model_id": model_id, "type": "create_model"}));
    let id = w.next_id("req");
    w.jobs.insert(id.clone(), ops::job(result, script));
    future(&id, None)
}

async fn submit_training(State(s): S, body: Bytes, op: &'static str) -> Response {
    let body = parse(&body);
    let script = s.take_script(op);
    let model_id = body
        .get("model_id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut w = lock(&s.world);
    let job = ops::job(Ok(Value::Null), script);
    let job = super::state::Job {
        result: JobResult::Waiting,
        ..job
    };
    match ops::submit_training(&mut w, &s.opts, "tinker", &model_id, op, &body, job) {
        Ok(id) => future(&id, Some(&model_id)),
        Err((status, msg)) => error(
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            msg,
        ),
    }
}

async fn create_sampling_session(State(s): S, body: Bytes) -> Response {
    let body = parse(&body);
    let mut w = lock(&s.world);
    let session = body.get("session_id").and_then(Value::as_str).unwrap_or("");
    if !w.sessions.contains_key(session) {
        let (status, msg) = w.session_error(session);
        return error(
            StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND),
            msg,
        );
    }
    match ops::create_sampler(&mut w, s.opts.vocab_size, &body) {
        Ok(id) => Json(json!({"sampling_session_id": id})).into_response(),
        Err(e) => error(StatusCode::BAD_REQUEST, e),
    }
}

async fn asample(State(s): S, body: Bytes) -> Response {
    let body = parse(&body);
    let script = s.take_script("sample");
    let mut w = lock(&s.world);
    let session = body
        .get("sampling_session_id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let seq = body.get("seq_id").and_then(Value::as_u64);
    let result = ops::sample(&mut w, &s.opts, &session, seq, &body);
    let id = w.next_id("req");
    w.jobs.insert(id.clone(), ops::job(result, script));
    future(&id, None)
}

async fn retrieve_future(State(s): S, body: Bytes) -> Response {
    let body = parse(&body);
    let id = body.get("request_id").and_then(Value::as_str).unwrap_or("");
    let mut w = lock(&s.world);
    let Some(job) = w.jobs.get_mut(id) else {
        return error(StatusCode::NOT_FOUND, format!("unknown request_id {id}"));
    };
    job.polls += 1;
    let try_again = || {
        Json(json!({"type": "try_again", "request_id": id, "queue_state": "active"}))
            .into_response()
    };
    match &job.script {
        Some(FutureScript::Expired) => {
            return error(StatusCode::GONE, "the promise expired".into());
        }
        Some(FutureScript::TryAgain(n)) if job.polls <= *n => return try_again(),
        Some(FutureScript::Hold) => return try_again(),
        Some(FutureScript::Timeout408(n)) if job.polls <= *n => {
            return (
                StatusCode::REQUEST_TIMEOUT,
                Json(json!({"queue_state": "active"})),
            )
                .into_response();
        }
        Some(FutureScript::Fail { message, category }) => {
            return Json(json!({"error": message, "category": category})).into_response();
        }
        _ => {}
    }
    match &job.result {
        JobResult::Waiting => try_again(),
        JobResult::Done(v) => Json(v.clone()).into_response(),
        JobResult::Failed { message, category } => {
            Json(json!({"error": message, "category": category})).into_response()
        }
    }
}

async fn hf_file(State(s): S, Path(path): Path<String>) -> Response {
    match lock(&s.hf_files).get(&path) {
        Some(bytes) => bytes.clone().into_response(),
        None => error(StatusCode::NOT_FOUND, format!("{path} not found")),
    }
}
