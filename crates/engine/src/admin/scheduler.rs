//! `/api/scheduler`: the training windows — status, pause, resume, and an event stream
//! (Server-Sent Events) the tray and the UI follow.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use metaclaw_schedule::machine::{Event, Snapshot};
use serde::Deserialize;
use tokio::sync::{broadcast, watch};

use super::routes::{AdminState, error};
use crate::schedule::parse;
use crate::schedule::view::{Extra, SchedulerStatus};

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/scheduler", get(status))
        .route("/api/scheduler/pause", post(pause))
        .route("/api/scheduler/resume", post(resume))
        .route("/api/scheduler/events", get(events))
}

/// The status the routes send: the snapshot plus what only the engine knows.
fn view(state: &AdminState, snapshot: &Snapshot) -> SchedulerStatus {
    let w = &state.scheduler;
    SchedulerStatus::new(
        snapshot,
        Extra {
            info: w.info(),
            pause_problem: w.pause_problem(),
            gate: state.config.scheduler.gate_background_learning,
            running: true,
            tz: w.time_zone(),
        },
    )
}

async fn status(State(state): State<Arc<AdminState>>) -> Response {
    axum::Json(view(&state, &state.scheduler.snapshot())).into_response()
}

/// `{"for": "2h"}`, `{"until": "18:00" | "<RFC 3339>" | "<local date-time>"}`, or `{}` (or
/// no body): until resumed.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PauseBody {
    #[serde(rename = "for")]
    duration: Option<String>,
    until: Option<String>,
}

async fn pause(State(state): State<Arc<AdminState>>, body: Bytes) -> Response {
    let body: PauseBody = if body.iter().all(u8::is_ascii_whitespace) {
        PauseBody::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(b) => b,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    &format!(
                        "the body must be {{\"for\": \"2h\"}}, {{\"until\": \"18:00\"}} or {{}}: {e}"
                    ),
                );
            }
        }
    };
    let w = &state.scheduler;
    let until = match parse::pause_end(
        body.duration.as_deref(),
        body.until.as_deref(),
        w.now(),
        &w.time_zone(),
    ) {
        Ok(u) => u,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e.to_string()),
    };
    match w.pause(until).await {
        Ok(snapshot) => axum::Json(view(&state, &snapshot)).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

async fn resume(State(state): State<Arc<AdminState>>) -> Response {
    match state.scheduler.resume().await {
        Ok(snapshot) => axum::Json(view(&state, &snapshot)).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// `event: snapshot` (the status, as `GET /api/scheduler`) first and after every change,
/// and one SSE event per scheduler event, named by its kind (`opened`, `closed`,
/// `step_started`, `step_stopped`, `step_finished`, `paused`, `resumed`).
async fn events(State(state): State<Arc<AdminState>>) -> Response {
    // Subscribe before reading the snapshot, so nothing falls between the two.
    let events = state.scheduler.events();
    let mut snapshots = state.scheduler.watch();
    let first = snapshots.borrow_and_update().clone();
    let stream = stream(state, first, events, snapshots);
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

struct Follow {
    state: Arc<AdminState>,
    first: Option<Snapshot>,
    events: broadcast::Receiver<Event>,
    snapshots: watch::Receiver<Snapshot>,
}

fn stream(
    state: Arc<AdminState>,
    first: Snapshot,
    events: broadcast::Receiver<Event>,
    snapshots: watch::Receiver<Snapshot>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let follow = Follow {
        state,
        first: Some(first),
        events,
        snapshots,
    };
    futures_util::stream::unfold(follow, |mut f| async move {
        if let Some(first) = f.first.take() {
            let e = snapshot_event(&f.state, &first);
            return Some((Ok(e), f));
        }
        let next = tokio::select! {
            // Events first: a change is announced before the snapshot it produced.
            biased;
            // An open stream must not hold up a graceful shutdown.
            () = f.state.shutdown.cancelled() => return None,
            e = f.events.recv() => match e {
                Ok(e) => event(&e),
                // Missed some: the current snapshot says where things are.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let s = f.snapshots.borrow_and_update().clone();
                    snapshot_event(&f.state, &s)
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            },
            changed = f.snapshots.changed() => match changed {
                Ok(()) => {
                    let s = f.snapshots.borrow_and_update().clone();
                    snapshot_event(&f.state, &s)
                }
                Err(_) => return None,
            },
        };
        Some((Ok(next), f))
    })
}

fn snapshot_event(state: &AdminState, snapshot: &Snapshot) -> SseEvent {
    let data = serde_json::to_string(&view(state, snapshot)).unwrap_or_default();
    SseEvent::default().event("snapshot").data(data)
}

fn event(e: &Event) -> SseEvent {
    let value = serde_json::to_value(e).unwrap_or_default();
    let kind = value
        .get("event")
        .and_then(|k| k.as_str())
        .unwrap_or("event")
        .to_string();
    SseEvent::default().event(kind).data(value.to_string())
}
