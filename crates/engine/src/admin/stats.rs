//! `GET /api/stats/series?hours=24&buckets=24`: the dashboard's charts — requests (count,
//! errors, overhead percentiles), skills and memories over time, one entry per bucket,
//! oldest first. Aggregated in SQL on a blocking thread.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use metaclaw_store::{Buckets, Store};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::clock::unix_ms;

const MAX_HOURS: u64 = 24 * 90;
const MAX_BUCKETS: usize = 500;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/stats/series", get(series))
}

#[derive(Deserialize)]
struct SeriesQuery {
    hours: Option<u64>,
    buckets: Option<usize>,
}

async fn series(
    State(state): State<Arc<AdminState>>,
    Query(q): Query<SeriesQuery>,
) -> Result<Json<Value>, ApiError> {
    let hours = q.hours.unwrap_or(24);
    if hours == 0 || hours > MAX_HOURS {
        return Err(ApiError::BadRequest(format!(
            "hours must be between 1 and {MAX_HOURS}."
        )));
    }
    let count = q.buckets.unwrap_or(24);
    if count == 0 || count > MAX_BUCKETS {
        return Err(ApiError::BadRequest(format!(
            "buckets must be between 1 and {MAX_BUCKETS}."
        )));
    }
    let span_ms = i64::try_from(hours * 3_600_000).unwrap_or(i64::MAX);
    // Rounded up, so the buckets cover the whole span and end at (or just after) now.
    let bucket_ms = (span_ms + count as i64 - 1) / count as i64;
    let to_ms = unix_ms(SystemTime::now()) + 1;
    let b = Buckets {
        from_ms: to_ms - bucket_ms * count as i64,
        bucket_ms,
        count,
    };
    let skills_now = state
        .skills
        .as_ref()
        .map_or(0, |s| s.current.get().library.len() as u64);
    let (db, recorder) = (state.db.clone(), state.recorder.clone());
    let read = tokio::task::spawn_blocking(move || {
        // Turns announced on /api/events are queued for the writer just before the event;
        // committing the queue first makes the announced turn part of the answer.
        if let Err(e) = recorder.flush() {
            tracing::debug!(error = %e, "series read without flushing the recorder");
        }
        let store = Store::open_read_only(&db)?;
        let requests = store.request_series(b)?;
        let memories = store.memory_totals(b)?;
        let (added, after) = store.skills_added_series(b)?;
        Ok::<_, metaclaw_store::StoreError>((requests, memories, added, after))
    })
    .await?;
    // No database yet: nothing has happened.
    let (requests, memories, added, after) =
        read.unwrap_or_else(|_| (Vec::new(), vec![0; count], vec![0; count], 0));
    let requests: Vec<_> = if requests.is_empty() {
        (0..count)
            .map(|i| json!({"t_ms": b.start(i), "count": 0, "errors": 0, "overhead_p50_ms": null, "overhead_p95_ms": null}))
            .collect()
    } else {
        requests
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or_default())
            .collect()
    };
    let skills = skill_totals(skills_now, &added, after);
    let totals = |v: &[u64]| -> Vec<_> {
        v.iter()
            .enumerate()
            .map(|(i, total)| json!({"t_ms": b.start(i), "total": total}))
            .collect()
    };
    Ok(Json(json!({
        "from_ms": b.from_ms,
        "to_ms": b.to_ms(),
        "bucket_ms": b.bucket_ms,
        "requests": requests,
        "skills": totals(&skills),
        "memories": totals(&memories),
    })))
}

/// The library's size at the end of each bucket, counted back from its size now: skills
/// evolution added later did not exist yet.
fn skill_totals(now: u64, added: &[u64], added_after: u64) -> Vec<u64> {
    let mut later = added_after;
    let mut out = vec![0; added.len()];
    for (i, n) in added.iter().enumerate().rev() {
        out[i] = now.saturating_sub(later);
        later += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_totals_count_back_from_now() {
        // 10 skills now; 2 added in bucket 1, 1 in bucket 2, none since.
        assert_eq!(skill_totals(10, &[0, 2, 1], 0), vec![7, 9, 10]);
        assert_eq!(skill_totals(1, &[0, 5], 0), vec![0, 1]);
    }
}
