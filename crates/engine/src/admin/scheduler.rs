//! `/api/scheduler`: the training windows — status, pause, resume, and an event stream
//! (Server-Sent Events) the tray and the UI follow.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::machine::{Event, Snapshot};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{broadcast, oneshot, watch};

use super::api_error::ApiError;
use super::routes::AdminState;
use super::settings::{Staged, sentence};
use crate::calendar::{self as cal, Present};
use crate::config::{self, Config};
use crate::paths::Paths;
use crate::schedule::view::{Extra, SchedulerStatus};
use crate::schedule::{offline, parse, text};
use crate::secrets::SecretStore;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/scheduler", get(status))
        .route("/api/scheduler/pause", post(pause))
        .route("/api/scheduler/resume", post(resume))
        .route("/api/scheduler/events", get(events))
        .route("/api/scheduler/preview", get(preview))
        .route("/api/scheduler/calendar/connect", post(calendar_connect))
        .route(
            "/api/scheduler/calendar/disconnect",
            post(calendar_disconnect),
        )
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

async fn pause(
    State(state): State<Arc<AdminState>>,
    body: Bytes,
) -> Result<axum::Json<SchedulerStatus>, ApiError> {
    let body: PauseBody = if body.iter().all(u8::is_ascii_whitespace) {
        PauseBody::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError::BadRequest(format!(
                "the body must be {{\"for\": \"2h\"}}, {{\"until\": \"18:00\"}} or {{}}: {e}"
            ))
        })?
    };
    let w = &state.scheduler;
    let until = parse::pause_end(
        body.duration.as_deref(),
        body.until.as_deref(),
        w.now(),
        &w.time_zone(),
    )
    .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let snapshot = w.pause(until).await.map_err(ApiError::internal)?;
    Ok(axum::Json(view(&state, &snapshot)))
}

async fn resume(
    State(state): State<Arc<AdminState>>,
) -> Result<axum::Json<SchedulerStatus>, ApiError> {
    let snapshot = state.scheduler.resume().await.map_err(ApiError::internal)?;
    Ok(axum::Json(view(&state, &snapshot)))
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

#[derive(Debug, Deserialize)]
struct PreviewQuery {
    sleep_start: Option<String>,
    sleep_end: Option<String>,
}

/// `GET /api/scheduler/preview?sleep_start=HH:MM&sleep_end=HH:MM`: the next window with
/// the proposed sleep hours, as `metaclaw scheduler next-window` computes it from the
/// config (sleep hours and the pause). The hours are checked by the config's own
/// validation, on a staged copy: nothing is written.
async fn preview(
    State(state): State<Arc<AdminState>>,
    Query(q): Query<PreviewQuery>,
) -> Result<axum::Json<serde_json::Value>, ApiError> {
    let home = state.home.clone();
    let preview = tokio::task::spawn_blocking(move || {
        let paths = Paths::new(&home)?;
        let store = SecretStore::open(&paths)?;
        let staged = Staged::new(&paths).map_err(ApiError::internal)?;
        let changes: Vec<(String, String)> = [
            ("scheduler.sleep_start", q.sleep_start),
            ("scheduler.sleep_end", q.sleep_end),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
        .collect();
        staged.set_all(&store, &changes)?;
        let config = Config::load(&staged.paths)
            .map_err(|e| ApiError::Invalid(sentence("scheduler", &e)))?
            .config;
        let status = offline::status(&paths, &config);
        let now = SystemClock.now_zoned();
        let line = text::next_window(&status, &now);
        let next = line
            .strip_prefix("next window: ")
            .unwrap_or(&line)
            .to_owned();
        let s = &config.scheduler;
        Ok::<_, ApiError>(json!({
            "next_window": next,
            "sleep": format!("{}–{}", s.sleep_start, s.sleep_end),
        }))
    })
    .await??;
    Ok(axum::Json(preview))
}

/// How long connect waits for the sign-in address before giving up.
const AUTH_URL_WAIT: Duration = Duration::from_secs(30);
/// How long the sign-in may take before the flow gives up waiting for Google's redirect.
const SIGN_IN_WAIT: Duration = Duration::from_secs(15 * 60);

/// The sign-in address, or why the flow failed before there was one.
type UrlSlot = Arc<Mutex<Option<oneshot::Sender<Result<String, cal::CalendarError>>>>>;

fn answer(slot: &UrlSlot, value: Result<String, cal::CalendarError>) {
    if let Some(tx) = slot.lock().unwrap_or_else(PoisonError::into_inner).take() {
        let _ = tx.send(value);
    }
}

/// `POST /api/scheduler/calendar/connect` → `{"auth_url"}`: Google's installed-app flow
/// (the same engine call as `metaclaw scheduler calendar connect`) runs in the background,
/// waiting for the loopback redirect; the UI opens the address. Once connected,
/// `scheduler.calendar.enabled` is set, as the CLI does.
async fn calendar_connect(
    State(state): State<Arc<AdminState>>,
) -> Result<axum::Json<serde_json::Value>, ApiError> {
    let home = state.home.clone();
    let (paths, config, store) = tokio::task::spawn_blocking(move || {
        let paths = Paths::new(&home)?;
        let loaded = Config::load(&paths)?;
        let store = SecretStore::open(&paths)?.with_legacy(loaded.legacy_secrets);
        Ok::<_, ApiError>((paths, loaded.config, store))
    })
    .await??;
    cal::credentials_path(&config.scheduler.calendar, &paths)
        .map_err(|why| ApiError::BadRequest(why.to_string()))?;
    let (tx, rx) = oneshot::channel();
    let slot: UrlSlot = Arc::new(Mutex::new(Some(tx)));
    let show = {
        let slot = slot.clone();
        Present::Show(Arc::new(move |url: &str| answer(&slot, Ok(url.to_owned()))))
    };
    let shutdown = state.shutdown.clone();
    state.tasks.spawn("calendar sign-in", async move {
        let flow = cal::connect(&config, &paths, &store, show);
        let done = tokio::select! {
            r = tokio::time::timeout(SIGN_IN_WAIT, flow) => r,
            () = shutdown.cancelled() => return,
        };
        match done {
            Ok(Ok(info)) => {
                tracing::info!(calendars = ?info.calendars, "connected to Google Calendar");
                if !config.scheduler.calendar.enabled {
                    let set = tokio::task::spawn_blocking(move || {
                        config::set(&paths, "scheduler.calendar.enabled", "true", &store)
                    })
                    .await;
                    if !matches!(set, Ok(Ok(_))) {
                        tracing::warn!("could not set scheduler.calendar.enabled");
                    }
                }
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "calendar connect failed");
                answer(&slot, Err(e));
            }
            Err(_) => tracing::info!("calendar sign-in not completed in time; connect again"),
        }
    });
    match tokio::time::timeout(AUTH_URL_WAIT, rx).await {
        Ok(Ok(Ok(url))) => Ok(axum::Json(json!({"auth_url": url}))),
        Ok(Ok(Err(e))) => Err(ApiError::BadGateway(format!(
            "cannot start the Google sign-in: {e}"
        ))),
        _ => Err(ApiError::GatewayTimeout(
            "the Google sign-in did not start; try again".into(),
        )),
    }
}

/// `POST /api/scheduler/calendar/disconnect`: the stored Google token is deleted.
async fn calendar_disconnect(
    State(state): State<Arc<AdminState>>,
) -> Result<axum::Json<serde_json::Value>, ApiError> {
    let home = state.home.clone();
    tokio::task::spawn_blocking(move || {
        let paths = Paths::new(&home)?;
        let store = SecretStore::open(&paths)?;
        Ok::<_, ApiError>(cal::disconnect(&store)?)
    })
    .await??;
    Ok(axum::Json(json!({"ok": true})))
}
