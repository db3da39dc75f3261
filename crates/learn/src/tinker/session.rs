//! Session bootstrap (`client/config`, optional JWT exchange, `create_session`) and the
//! heartbeat task that keeps the session alive until the client is dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reqwest::Method;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::wire::str_field;
use crate::error::LearnError;
use crate::http::{Http, Resend};

/// What the server's `client/config` told us.
#[derive(Debug, Clone)]
pub(crate) struct ServerFlags {
    pub jwt: bool,
    pub max_chunk_len: usize,
}

pub(crate) const SDK_VERSION: &str = "0.22.0";

pub(crate) async fn client_config(http: &Http) -> Result<ServerFlags, LearnError> {
    let body = json!({"sdk_version": SDK_VERSION});
    let raw = http
        .send(
            "reading the server configuration",
            Method::POST,
            "/api/v1/client/config",
            Some(&body),
            &[],
            Resend::Safe,
        )
        .await?;
    // Older servers may not have the route; defaults apply then.
    let v = if raw.status.is_success() {
        raw.json()
    } else {
        Value::Null
    };
    Ok(ServerFlags {
        jwt: v
            .get("pjwt_auth_enabled")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        max_chunk_len: v
            .get("fwdbwd_max_chunk_len")
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n > 0)
            .unwrap_or(1024),
    })
}

pub(crate) async fn create_session(http: &Http) -> Result<String, LearnError> {
    let op = "creating a session";
    let body = json!({
        "tags": ["metaclaw"],
        "user_metadata": {},
        "sdk_version": SDK_VERSION,
        "type": "create_session",
    });
    let v = http
        .call(
            op,
            Method::POST,
            "/api/v1/create_session",
            Some(&body),
            Resend::Safe,
        )
        .await?;
    if let Some(err) = str_field(&v, &["error_message"]) {
        return Err(LearnError::Backend {
            backend: http.backend,
            op: op.to_owned(),
            status: None,
            message: http.scrub(&err),
        });
    }
    if let Some(warning) = str_field(&v, &["warning_message"]) {
        tracing::warn!(backend = http.backend, "{}", http.scrub(&warning));
    }
    str_field(&v, &["session_id"])
        .ok_or_else(|| super::wire::malformed(http.backend, op, "no session_id"))
}

/// Sends a heartbeat every `policy.heartbeat_interval` until `stop` is cancelled. Failures
/// are logged, counted, and do not end the loop (the server decides when a session ends).
pub(crate) fn spawn_heartbeat(
    http: Arc<Http>,
    session_id: String,
    stop: CancellationToken,
    sent: Arc<AtomicU64>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let body = json!({"session_id": session_id, "type": "session_heartbeat"});
        let interval = http.policy.heartbeat_interval;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(interval) => {}
            }
            let res = tokio::select! {
                () = stop.cancelled() => return,
                r = http.send("sending a heartbeat", Method::POST, "/api/v1/session_heartbeat", Some(&body), &[], Resend::Once) => r,
            };
            sent.fetch_add(1, Ordering::Relaxed);
            match res {
                Ok(raw) if raw.status.is_success() => {}
                Ok(raw) => tracing::warn!(
                    backend = http.backend,
                    status = raw.status.as_u16(),
                    "session heartbeat refused"
                ),
                Err(e) => {
                    tracing::warn!(backend = http.backend, error = %e, "session heartbeat failed")
                }
            }
        }
    })
}
