//! Runs before every handler: records the request, checks the key, injects queued faults,
//! and answers a repeated `X-Idempotency-Key` with the response already given (so a
//! resent submission never runs twice).

use std::io;
use std::sync::Arc;

use axum::body::{Body, Bytes, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::state::{Fault, RecordedRequest, Shared, lock};

const BODY_LIMIT: usize = 256 << 20;

/// Weaver's routes (its own key header).
pub(crate) fn is_weaver(path: &str) -> bool {
    [
        "/api/v1/sessions",
        "/api/v1/models/",
        "/api/v1/sampling-sessions/",
        "/api/v1/operations/",
    ]
    .iter()
    .any(|p| path.starts_with(p))
}

pub(crate) fn error(status: StatusCode, message: String) -> Response {
    (status, axum::Json(json!({"error": message}))).into_response()
}

fn broken_body() -> Response {
    let stream = futures_util::stream::once(async {
        Err::<Bytes, io::Error>(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "injected disconnect",
        ))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .body(Body::from_stream(stream))
        .unwrap_or_default()
}

fn fault_response(shared: &Shared, fault: &Fault, sent_key: &str) -> Response {
    match fault {
        Fault::Status {
            status,
            retry_after,
        } => {
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut msg = format!("injected {}", status.as_u16());
            if shared.opts.echo_key_in_errors {
                msg.push_str(&format!(" for key {sent_key}"));
            }
            let mut resp = error(status, msg);
            if let Some(Ok(v)) = retry_after.map(|s| s.to_string().parse()) {
                resp.headers_mut().insert("retry-after", v);
            }
            resp
        }
        Fault::Disconnect | Fault::DisconnectAfterProcessing => broken_body(),
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

pub(crate) async fn guard(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = to_bytes(body, BODY_LIMIT).await.unwrap_or_default();
    let path = parts.uri.path().to_owned();
    let json_body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    lock(&shared.requests).push(RecordedRequest {
        method: parts.method.to_string(),
        path: path.clone(),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: json_body,
    });
    if !path.starts_with("/api/") {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    let key_header = if is_weaver(&path) {
        "x-weaver-api-key"
    } else {
        "x-api-key"
    };
    let sent = header(&parts.headers, key_header).to_owned();
    let jwt = lock(&shared.world).issued_jwt.clone();
    let bootstrap = path == "/api/v1/client/config" || path == "/api/v1/auth/token";
    let accepted = match (&jwt, shared.opts.jwt && !bootstrap) {
        (Some(token), true) => sent == *token,
        (None, true) => false,
        _ => sent == shared.opts.api_key,
    };
    if !accepted {
        let mut msg = "invalid API key".to_owned();
        if shared.opts.echo_key_in_errors {
            msg.push_str(&format!(" {sent}"));
        }
        let mut resp = error(StatusCode::UNAUTHORIZED, msg);
        if shared.opts.jwt && sent.starts_with("eyJ") {
            resp.headers_mut().insert(
                "www-authenticate",
                axum::http::HeaderValue::from_static("Bearer error=\"invalid_token\""),
            );
        }
        return resp;
    }
    let fault = shared.take_fault(&path);
    if let Some(f) = fault
        .as_ref()
        .filter(|f| **f != Fault::DisconnectAfterProcessing)
    {
        return fault_response(&shared, f, &sent);
    }
    let idem = header(&parts.headers, "x-idempotency-key").to_owned();
    let dedupe = !idem.is_empty()
        && path != "/api/v1/retrieve_future"
        && path != "/api/v1/session_heartbeat";
    if dedupe {
        let mut world = lock(&shared.world);
        if let Some(cached) = world.idempotent.get(&idem).cloned() {
            world.replays += 1;
            return axum::Json(cached).into_response();
        }
    }
    let resp = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let (rparts, rbody) = resp.into_parts();
    let rbytes = to_bytes(rbody, BODY_LIMIT).await.unwrap_or_default();
    if dedupe
        && rparts.status.is_success()
        && let Ok(v) = serde_json::from_slice::<Value>(&rbytes)
    {
        lock(&shared.world).idempotent.insert(idem, v);
    }
    if fault == Some(Fault::DisconnectAfterProcessing) {
        return broken_body();
    }
    Response::from_parts(rparts, Body::from(rbytes))
}
