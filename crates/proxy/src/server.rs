//! The router, the Host check, and serving until shutdown.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::auth;
use crate::error::{ApiError, ErrorKind};
use crate::routes::{count_tokens, info, plugin, turn};
use crate::seams::{EndReason, Protocol, SessionEvent};
use crate::state::SharedState;

/// The agent API. The engine merges its admin routes into this router before serving.
pub fn router(state: SharedState) -> Router {
    Router::new()
        .route("/healthz", get(info::healthz))
        .route("/metrics", get(info::metrics))
        .route("/v1/models", get(info::models))
        .route("/v1/chat/completions", post(turn::chat_completions))
        .route("/v1/messages", post(turn::messages))
        .route(
            "/v1/messages/count_tokens",
            post(count_tokens::count_tokens),
        )
        .merge(
            plugin::router()
                .route_layer(middleware::from_fn_with_state(state.clone(), plugin::gate)),
        )
        .fallback(info::not_found)
        .with_state(state)
}

/// Adds the DNS-rebinding Host check in front of everything (admin and UI included).
pub fn guard(router: Router, state: SharedState) -> Router {
    router.layer(middleware::from_fn_with_state(state, host_check))
}

async fn host_check(State(state): State<SharedState>, req: Request, next: Next) -> Response {
    let bind_host = state.config.bind.ip().to_string();
    if auth::host_ok(req.headers(), &bind_host, &state.config.allowed_hosts) {
        return next.run(req).await;
    }
    ApiError::new(
        Protocol::Openai,
        StatusCode::FORBIDDEN,
        ErrorKind::Permission,
        "Host header is not an address of this MetaClaw (add it to proxy.allowed_hosts if intended)",
    )
    .into_response()
}

/// Refuses to expose the proxy beyond loopback without a key.
pub fn check_bind(state: &SharedState) -> Result<(), String> {
    if !state.config.bind.ip().is_loopback() && state.config.api_key.is_none() {
        return Err(format!(
            "refusing to listen on {} without proxy.api_key: anyone on the network could use your LLM key",
            state.config.bind
        ));
    }
    Ok(())
}

/// Serves `app` on `listener` until `shutdown` fires, then ends open sessions.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    state: SharedState,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    // Weak: the hook lives in the state it reaches, and must not keep it alive after a restart.
    let weak = Arc::downgrade(&state);
    state.sessions.on_quiet(Box::new(move || {
        if let Some(state) = weak.upgrade() {
            state.sticky.release_memory();
        }
    }));
    let sweeper = tokio::spawn(Arc::clone(&state.sessions).run_sweeper(shutdown.clone()));
    let forgetter = tokio::spawn(forget_ended_sessions(state.clone(), shutdown.clone()));
    crate::listen::accept_loop(
        listener,
        app,
        state.config.connection_timeout,
        shutdown.clone(),
    )
    .await;
    let result: std::io::Result<()> = Ok(());
    shutdown.cancel();
    let _ = sweeper.await;
    let _ = forgetter.await;
    state.sessions.end_all(EndReason::Shutdown);
    result
}

/// Ended sessions' remembered blocks leave memory (the store keeps them for a resumed
/// conversation), so memory does not grow with every conversation ever served.
async fn forget_ended_sessions(state: SharedState, shutdown: CancellationToken) {
    let mut events = state.sessions.subscribe();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            event = events.recv() => match event {
                Ok(SessionEvent::Ended { session_id, .. }) => state.sticky.forget(&session_id),
                Ok(SessionEvent::Started { .. }) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
        }
    }
}
