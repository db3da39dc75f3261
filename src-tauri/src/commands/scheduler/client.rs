//! The scheduler's admin routes from the CLI: GET through the shared admin client, and
//! POST with a JSON body (pause), which that client does not send.

use std::time::Duration;

use metaclaw_engine::paths::Paths;
use metaclaw_engine::runfiles::RunInfo;
use metaclaw_engine::schedule::SchedulerStatus;
use serde_json::Value;

use crate::admin_client::AdminClient;
use crate::exit::{Failure, NOT_RUNNING};

/// The running engine's client, `None` when MetaClaw is not running.
pub fn running(paths: &Paths) -> Result<Option<AdminClient>, Failure> {
    match AdminClient::connect(paths) {
        Ok(c) => Ok(Some(c)),
        Err(f) if f.code == NOT_RUNNING => Ok(None),
        Err(f) => Err(f),
    }
}

pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// `GET /api/scheduler`, as sent (for `--json`) and parsed.
pub fn status(client: &AdminClient) -> Result<(Value, SchedulerStatus), Failure> {
    let value = runtime()?.block_on(client.get("/api/scheduler"))?;
    let status = serde_json::from_value(value.clone())
        .map_err(|e| Failure::error(format!("unexpected answer from MetaClaw: {e}")))?;
    Ok((value, status))
}

/// POSTs `body` to `path` on the running engine and parses the scheduler status it answers.
pub fn post(paths: &Paths, path: &str, body: &Value) -> Result<SchedulerStatus, Failure> {
    let info = RunInfo::read(paths)?.ok_or_else(Failure::not_running)?;
    let (Some(port), Some(token)) = (info.port, info.admin_token) else {
        return Err(Failure::error(
            "MetaClaw is starting (its run files are incomplete); try again in a moment",
        ));
    };
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .no_proxy()
        .build()?;
    let url = format!("http://127.0.0.1:{port}{path}");
    runtime()?.block_on(async {
        let resp = http
            .post(url)
            .bearer_auth(token.expose())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| {
                Failure::error(format!("MetaClaw (PID {}) did not answer: {e}", info.pid))
            })?;
        let status = resp.status();
        let bytes = resp.bytes().await?;
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            Failure::error(format!("unexpected answer from MetaClaw ({status}): {e}"))
        })?;
        if !status.is_success() {
            let msg = value
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Err(Failure::error(format!("MetaClaw answered {status}: {msg}")));
        }
        serde_json::from_value(value)
            .map_err(|e| Failure::error(format!("unexpected answer from MetaClaw: {e}")))
    })
}
