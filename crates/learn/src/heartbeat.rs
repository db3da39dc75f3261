//! The session heartbeat task shared by the clients: one request every
//! `policy.heartbeat_interval` until the client shuts down. Failures are logged and do not
//! end the loop; a 404 or 410 means the server ended the session, which is recorded so the
//! owner can reconnect.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::http::{Http, Resend};

#[derive(Debug, Default)]
pub(crate) struct HeartbeatState {
    /// Heartbeats answered (successfully or not).
    pub sent: AtomicU64,
    /// The server said the session is gone.
    pub expired: AtomicBool,
}

pub(crate) fn spawn(
    http: Arc<Http>,
    path: String,
    body: Option<Value>,
    state: Arc<HeartbeatState>,
) -> JoinHandle<()> {
    let stop = http.cancel.clone();
    tokio::spawn(async move {
        let op = "sending a heartbeat";
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(http.policy.heartbeat_interval) => {}
            }
            let res = tokio::select! {
                () = stop.cancelled() => return,
                r = http.send(op, Method::POST, &path, body.as_ref(), &[], Resend::Once) => r,
            };
            state.sent.fetch_add(1, Ordering::Relaxed);
            match res {
                Ok(raw) if raw.status.is_success() => {}
                Ok(raw)
                    if raw.status == StatusCode::GONE || raw.status == StatusCode::NOT_FOUND =>
                {
                    if !state.expired.swap(true, Ordering::SeqCst) {
                        tracing::warn!(
                            backend = http.backend,
                            "the backend ended the session; reconnect to continue"
                        );
                    }
                }
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
