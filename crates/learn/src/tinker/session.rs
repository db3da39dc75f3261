//! Session bootstrap: `client/config` (server flags) and `create_session`.

use reqwest::Method;
use serde_json::{Value, json};

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
