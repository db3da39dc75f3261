//! `GET /api/events`: the engine's events as Server-Sent Events, named by their kind
//! (`turn`, `skills_learned`, `memory_changed`, …), with a keep-alive comment every 15 s.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::Stream;
use tokio::sync::broadcast;

use super::routes::AdminState;
use crate::events::EngineEvent;

const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/events", get(events))
}

async fn events(State(state): State<Arc<AdminState>>) -> Response {
    let rx = state.events.subscribe();
    Sse::new(stream(state, rx))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

fn stream(
    state: Arc<AdminState>,
    rx: broadcast::Receiver<EngineEvent>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    futures_util::stream::unfold((state, rx), |(state, mut rx)| async move {
        loop {
            let next = tokio::select! {
                // Events first, so `restarting` still reaches the UI; then an open stream
                // must not hold up a graceful shutdown or a restart (the UI reconnects).
                biased;
                e = rx.recv() => e,
                () = state.shutdown.cancelled() => return None,
            };
            match next {
                Ok(e) => return Some((Ok(sse(&e)), (state, rx))),
                // A slow reader misses the oldest events; the next ones still come.
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
}

pub(super) fn sse(e: &EngineEvent) -> SseEvent {
    let value = serde_json::to_value(e).unwrap_or_default();
    let kind = value
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or("event")
        .to_string();
    SseEvent::default().event(kind).data(value.to_string())
}
