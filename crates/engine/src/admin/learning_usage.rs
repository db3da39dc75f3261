//! `GET /api/learning/usage?days=30`: what learning cost per UTC day and purpose (calls,
//! failures, tokens with cache reads and writes), oldest day first, from the database.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::store_access;

const DEFAULT_DAYS: u16 = 30;
const MAX_DAYS: u16 = 3660;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/learning/usage", get(usage))
}

#[derive(Deserialize)]
struct UsageQuery {
    days: Option<u16>,
}

/// The first day of the `days` newest UTC days, today included.
fn since(days: u16) -> String {
    let back = i64::from(days.clamp(1, MAX_DAYS)) - 1;
    let day = time::OffsetDateTime::now_utc().date() - time::Duration::days(back);
    format!(
        "{:04}-{:02}-{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

async fn usage(
    State(state): State<Arc<AdminState>>,
    Query(q): Query<UsageQuery>,
) -> Result<Json<Value>, ApiError> {
    let since = since(q.days.unwrap_or(DEFAULT_DAYS));
    store_access::read(state.db.clone(), move |store| {
        let rows = store.learning_usage_since(&since)?;
        Ok(Json(json!({"since": since, "days": rows})))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_day_is_today() {
        let today = time::OffsetDateTime::now_utc().date();
        assert_eq!(
            since(1),
            format!(
                "{:04}-{:02}-{:02}",
                today.year(),
                u8::from(today.month()),
                today.day()
            )
        );
        assert!(since(30) < since(1));
        assert_eq!(since(0), since(1));
    }
}
