//! Collecting the result of a submitted request: `POST /api/v1/retrieve_future` until it
//! answers with the result, an error, or expiry.
//!
//! - 200 with the result → done;
//! - 200 `{"type":"try_again", "queue_state"}` and HTTP 408 (the server's long poll ended)
//!   → poll again after a pause that grows when the queue is paused;
//! - `{"error", "category"}` → the request failed on the server;
//! - 410 → the result expired ([`LearnError::Expired`]; the caller decides on resubmitting);
//! - 5xx, 429 and connection errors → retried by the HTTP layer (a poll is a read).

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::error::LearnError;
use crate::http::{Http, Resend, error_message};

pub(crate) async fn retrieve(
    http: &Http,
    op: &str,
    request_type: &str,
    request_id: &str,
) -> Result<Value, LearnError> {
    let started = Instant::now();
    let body = json!({"request_id": request_id, "allow_metadata_only": false});
    let mut iteration = 0u32;
    loop {
        if started.elapsed() > http.policy.op_timeout {
            return Err(LearnError::TimedOut {
                backend: http.backend,
                op: op.to_owned(),
                after: http.policy.op_timeout,
            });
        }
        let headers = [
            ("x-tinker-request-type", request_type.to_owned()),
            ("x-tinker-request-iteration", iteration.to_string()),
        ];
        iteration += 1;
        let raw = http
            .send(
                op,
                Method::POST,
                "/api/v1/retrieve_future",
                Some(&body),
                &headers,
                Resend::Safe,
            )
            .await?;
        let value = raw.json();
        let queue_state = value
            .get("queue_state")
            .and_then(Value::as_str)
            .unwrap_or("active")
            .to_owned();
        match raw.status {
            StatusCode::REQUEST_TIMEOUT => {
                http.pause(op, poll_pause(http, &queue_state)).await?;
                continue;
            }
            StatusCode::GONE => {
                return Err(LearnError::Expired {
                    backend: http.backend,
                    op: op.to_owned(),
                });
            }
            s if !s.is_success() => return Err(http.error(op, &raw)),
            _ => {}
        }
        match value.get("type").and_then(Value::as_str) {
            Some("try_again") => {
                http.pause(op, poll_pause(http, &queue_state)).await?;
                continue;
            }
            _ if value.get("status").and_then(Value::as_str) == Some("complete_metadata") => {
                continue;
            }
            _ => {}
        }
        if value.get("error").is_some_and(|e| !e.is_null()) {
            let category = value
                .get("category")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            let message = error_message(&value);
            return Err(LearnError::Backend {
                backend: http.backend,
                op: op.to_owned(),
                status: None,
                message: http.scrub(&format!("{message} (category: {category})")),
            });
        }
        return Ok(value);
    }
}

fn poll_pause(http: &Http, queue_state: &str) -> Duration {
    let base = http.policy.poll_interval;
    match queue_state {
        "paused_capacity" => base * 3,
        "paused_rate_limit" => base * 6,
        _ => base,
    }
}
