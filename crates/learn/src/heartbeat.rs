//! A backend session as both clients keep it: its id and its heartbeat task, one request every
//! `policy.heartbeat_interval` until the client shuts down. Failures are logged and do not
//! end the loop; a 404 or 410 means the server ended the session, which is recorded so the
//! owner can reconnect.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::DropGuard;

use crate::http::{Http, Resend};

/// A session and its heartbeat. Dropping it (with its client) ends the heartbeat and every
/// call in flight.
pub struct Session {
    pub id: String,
    http: Arc<Http>,
    state: Arc<HeartbeatState>,
    task: Mutex<Option<JoinHandle<()>>>,
    _stop: DropGuard,
}

impl Session {
    /// Starts heartbeats for session `id`: `body` posted to `path` every interval.
    pub(crate) fn start(http: &Arc<Http>, id: String, path: String, body: Option<Value>) -> Self {
        let state = Arc::new(HeartbeatState::default());
        let task = spawn(http.clone(), path, body, state.clone());
        Self {
            id,
            http: http.clone(),
            state,
            task: Mutex::new(Some(task)),
            _stop: http.cancel.clone().drop_guard(),
        }
    }

    /// Heartbeats sent so far (successful or not).
    pub fn heartbeats_sent(&self) -> u64 {
        self.state.sent.load(Ordering::Relaxed)
    }

    /// Whether the backend ended the session (a heartbeat got 404/410); the client is then
    /// useless and a new one must be connected.
    pub fn expired(&self) -> bool {
        self.state.expired.load(Ordering::SeqCst)
    }

    /// Stops the heartbeat and makes every call in flight fail with
    /// [`LearnError::Cancelled`](crate::LearnError::Cancelled) (for a clean stop when the user
    /// returns).
    pub fn shutdown(&self) {
        self.http.cancel.cancel();
    }

    /// Shuts down and waits until the heartbeat task has ended.
    pub async fn close(&self) {
        self.shutdown();
        let task = self.task.lock().ok().and_then(|mut h| h.take());
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

#[derive(Debug, Default)]
struct HeartbeatState {
    /// Heartbeats answered (successfully or not).
    pub sent: AtomicU64,
    /// The server said the session is gone.
    pub expired: AtomicBool,
}

fn spawn(
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
