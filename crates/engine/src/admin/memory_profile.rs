//! `GET /api/memory/profile`: the standing rules and preferences of a scope, as the profile
//! shows them on every main turn (when the scope's policy gives it `profile_tokens`), so a
//! person can see what is always in the prompt and demote (`PATCH` the unit's kind to
//! `semantic`: found by relevance like any fact) or forget what should not be.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use metaclaw_memory::render::profile_fits;
use metaclaw_memory::search::standing;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::memory::{ScopeParam, memory};
use super::routes::AdminState;
use crate::clock::unix_ms;
use crate::store_access;

/// Rules listed; a profile this long is far beyond any budget and is cut per request anyway.
const LISTED: usize = 200;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/memory/profile", get(show))
}

async fn show(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ScopeParam>,
) -> Result<Json<Value>, ApiError> {
    let memory = memory(&state)?;
    let scope = p.scope.unwrap_or_else(|| state.config.memory.scope.clone());
    store_access::read(state.db.clone(), move |store| {
        let conn = store.connection();
        let policy = memory.policies().get(conn, &scope);
        let now = unix_ms(SystemTime::now());
        let units = standing(conn, &scope, LISTED, now).map_err(ApiError::internal)?;
        let budget = policy.profile_tokens;
        Ok(Json(json!({
            "scope": scope,
            "profile_tokens": budget,
            // Shown on every turn only with a budget; whole while it fits, else per request.
            "on": budget > 0,
            "whole": budget > 0 && units.len() < LISTED && profile_fits(&units, budget),
            "units": units,
        })))
    })
    .await
}
