//! `GET /api/effect?days=30`: what followed the turns that carried each skill and memory,
//! the holdout's two arms, and the flagged skills (see [`crate::effect::report`]). Turns
//! recorded since the last call are labelled first, a bounded number of pages per call, so
//! the figures include the newest follow-ups without a background job.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::clock::unix_ms;
use crate::effect::label::label_new_turns;
use crate::effect::report::{EffectReport, report};
use crate::store_access;

const MAX_DAYS: u32 = 92;
/// Pages of turns labelled per call (500 each): a long backlog is caught up over a few calls.
const LABEL_PAGES: usize = 40;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/effect", get(effect))
}

#[derive(Deserialize)]
struct EffectQuery {
    days: Option<u32>,
}

async fn effect(
    State(state): State<Arc<AdminState>>,
    Query(q): Query<EffectQuery>,
) -> Result<Json<EffectReport>, ApiError> {
    let days = q.days.unwrap_or(30);
    if days == 0 || days > MAX_DAYS {
        return Err(ApiError::BadRequest(format!(
            "days must be between 1 and {MAX_DAYS}."
        )));
    }
    // Commit queued turns first, so the newest follow-up is labelled.
    let recorder = state.recorder.clone();
    if let Ok(Err(e)) = tokio::task::spawn_blocking(move || recorder.flush()).await {
        tracing::debug!(error = %e, "effect read without flushing the recorder");
    }
    let share = state.config.learning.holdout;
    let from = SystemTime::now() - Duration::from_secs(u64::from(days) * 86_400);
    store_access::write(state.db.clone(), move |store| {
        if let Err(e) = label_new_turns(store, LABEL_PAGES) {
            // Older labels still tell something: report them rather than nothing.
            tracing::warn!(error = %e, "could not label the newest turns");
        }
        let (items, all) = store.carried_effects(unix_ms(from))?;
        let arms = store.holdout_arms(unix_ms(from))?;
        Ok(Json(report(days, share, items, all, arms)))
    })
    .await
}
