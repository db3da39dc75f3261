//! Waiting for a Weaver operation: `GET /api/v1/operations/{id}` until its status is `done`
//! (→ its `response`) or `error` (→ its `error_code`/`error_message`).

use std::time::Instant;

use reqwest::Method;
use serde_json::Value;

use crate::error::LearnError;
use crate::http::{Http, Resend};
use crate::tinker::wire::{malformed, str_field};

pub(crate) async fn wait(http: &Http, op: &str, handle: &Value) -> Result<Value, LearnError> {
    let id = str_field(handle, &["id", "operation_id"])
        .ok_or_else(|| malformed(http.backend, op, "no operation id"))?;
    let started = Instant::now();
    let mut current = handle.clone();
    loop {
        match status(&current).as_str() {
            "done" | "succeeded" | "completed" => {
                return Ok(current.get("response").cloned().unwrap_or(Value::Null));
            }
            "error" | "failed" => {
                let code = str_field(&current, &["error_code", "error"])
                    .unwrap_or_else(|| "operation_failed".into());
                let message = str_field(&current, &["error_message"])
                    .map(|m| format!("{code}: {m}"))
                    .unwrap_or(code);
                return Err(LearnError::Backend {
                    backend: http.backend,
                    op: op.to_owned(),
                    status: None,
                    message: http.scrub(&message),
                });
            }
            _ => {}
        }
        if started.elapsed() > http.policy.op_timeout {
            return Err(LearnError::TimedOut {
                backend: http.backend,
                op: op.to_owned(),
                after: http.policy.op_timeout,
            });
        }
        http.pause(op, http.policy.poll_interval).await?;
        current = http
            .call(
                op,
                Method::GET,
                &format!("/api/v1/operations/{id}"),
                None,
                Resend::Safe,
            )
            .await?;
    }
}

fn status(v: &Value) -> String {
    v.get("status")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase()
}
