//! `GET /api/stats?hours=24&days=14`: what the traffic and learning of the window cost, the
//! prompt cache's share with and without MetaClaw's blocks, and the tokens MetaClaw added
//! (see [`crate::providers::CostReport`]); with `days`, the same figures for each of the
//! last `days` UTC days (today included), for the dashboard's charts. `metaclaw status`
//! asks for the last 24 hours; the dashboard's status poll does not pay for it.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::clock::unix_ms;
use crate::providers::{CostReport, cost_report, day_cost};
use crate::store_access;

const MAX_HOURS: u32 = 24 * 366;
/// A quarter of a year of daily figures: one indexed range query per day.
const MAX_DAYS: u32 = 92;
const DAY_MS: i64 = 86_400_000;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/stats", get(stats))
}

#[derive(Deserialize)]
struct StatsQuery {
    hours: Option<u32>,
    days: Option<u32>,
}

async fn stats(
    State(state): State<Arc<AdminState>>,
    Query(q): Query<StatsQuery>,
) -> Result<Json<CostReport>, ApiError> {
    let hours = q.hours.unwrap_or(24);
    if hours == 0 || hours > MAX_HOURS {
        return Err(ApiError::BadRequest(format!(
            "hours must be between 1 and {MAX_HOURS}."
        )));
    }
    let days = q.days.unwrap_or(0);
    if days > MAX_DAYS {
        return Err(ApiError::BadRequest(format!(
            "days must be between 0 and {MAX_DAYS}."
        )));
    }
    // Commit queued turns first, so a turn the dashboard was just told of is counted.
    let recorder = state.recorder.clone();
    if let Ok(Err(e)) = tokio::task::spawn_blocking(move || recorder.flush()).await {
        tracing::debug!(error = %e, "stats read without flushing the recorder");
    }
    Ok(Json(report(&state, hours, days).await?))
}

/// The report of the last `hours` and of each of the last `days`, read on a blocking thread.
async fn report(state: &AdminState, hours: u32, days: u32) -> Result<CostReport, ApiError> {
    let prices = state.config.prices.clone();
    let models = state.learning_models.clone();
    let now = SystemTime::now();
    let from = now - Duration::from_secs(u64::from(hours) * 3600);
    let since_day = utc_day(from);
    store_access::read(state.db.clone(), move |store| {
        let usage = store.usage_by_model(unix_ms(from), unix_ms(now) + 1)?;
        let today_ms = utc_midnight_ms(now);
        let first_ms = today_ms - i64::from(days.saturating_sub(1)) * DAY_MS;
        let first_day = utc_day(from_ms(first_ms));
        let learning = store.learning_usage_since(since_day.as_str().min(first_day.as_str()))?;
        let mut daily = Vec::new();
        for start in (0..days).map(|i| first_ms + i64::from(i) * DAY_MS) {
            let usage = store.usage_by_model(start, start + DAY_MS)?;
            let day = utc_day(from_ms(start));
            daily.push(day_cost(day, usage, &learning, &models, &prices));
        }
        let window: Vec<_> = learning
            .into_iter()
            .filter(|r| r.day >= since_day)
            .collect();
        let mut report = cost_report(hours, usage, &window, since_day, &models, &prices);
        report.daily = daily;
        Ok(report)
    })
    .await
}

/// The start of `t`'s UTC day, in Unix milliseconds.
fn utc_midnight_ms(t: SystemTime) -> i64 {
    let day = time::OffsetDateTime::from(t).date();
    day.midnight().assume_utc().unix_timestamp() * 1000
}

fn from_ms(ms: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// `YYYY-MM-DD` (UTC) of `t`.
fn utc_day(t: SystemTime) -> String {
    let day = time::OffsetDateTime::from(t).date();
    format!(
        "{:04}-{:02}-{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_utc_dates() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_892_800 - 1);
        assert_eq!(utc_day(t), "2025-12-04");
        assert_eq!(utc_day(t + Duration::from_secs(1)), "2025-12-05");
        assert_eq!(utc_midnight_ms(t), (1_764_892_800 - 86_400) * 1000);
        assert_eq!(
            utc_midnight_ms(t + Duration::from_secs(1)),
            1_764_892_800_000
        );
    }
}
