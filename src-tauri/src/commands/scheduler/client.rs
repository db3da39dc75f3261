//! The scheduler's admin routes from the CLI, through the shared admin client.

use metaclaw_engine::paths::Paths;
use metaclaw_engine::schedule::SchedulerStatus;
use serde_json::Value;

use crate::admin_client::{AdminClient, runtime};
use crate::exit::Failure;

/// `GET /api/scheduler`, as sent (for `--json`) and parsed.
pub fn status(client: &AdminClient) -> Result<(Value, SchedulerStatus), Failure> {
    let value = runtime()?.block_on(client.get("/api/scheduler"))?;
    let status = serde_json::from_value(value.clone())
        .map_err(|e| Failure::error(format!("unexpected answer from MetaClaw: {e}")))?;
    Ok((value, status))
}

/// POSTs `body` to `path` on the running engine and parses the scheduler status it answers.
pub fn post(paths: &Paths, path: &str, body: &Value) -> Result<SchedulerStatus, Failure> {
    let client = AdminClient::connect(paths)?;
    let value = runtime()?.block_on(client.post_json(path, body))?;
    serde_json::from_value(value)
        .map_err(|e| Failure::error(format!("unexpected answer from MetaClaw: {e}")))
}
