//! `/api/plugin/context | turn | session_end`: the plugin API (see the proxy's
//! `routes::plugin`) behind the admin token, for plugins that run the `metaclaw` binary and
//! read the token from the run files (Claude Code's hooks) instead of holding the agent key.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use bytes::Bytes;
use metaclaw_proxy::routes::plugin::{PluginRoute, answer, from_loopback, not_local};

use super::routes::AdminState;

pub(super) fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/plugin/context", post(context))
        .route("/api/plugin/turn", post(turn))
        .route("/api/plugin/session_end", post(session_end))
        .route_layer(middleware::from_fn(loopback_only))
}

/// Loopback only, as under `/v1/plugin/`, whatever `proxy.host` is.
async fn loopback_only(req: Request, next: Next) -> Response {
    if !from_loopback(&req) {
        return not_local();
    }
    next.run(req).await
}

async fn context(State(state): State<Arc<AdminState>>, body: Bytes) -> Response {
    answer(state.proxy.clone(), PluginRoute::Context, body).await
}

async fn turn(State(state): State<Arc<AdminState>>, body: Bytes) -> Response {
    answer(state.proxy.clone(), PluginRoute::Turn, body).await
}

async fn session_end(State(state): State<Arc<AdminState>>, body: Bytes) -> Response {
    answer(state.proxy.clone(), PluginRoute::SessionEnd, body).await
}
