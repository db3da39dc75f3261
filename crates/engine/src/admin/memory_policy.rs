//! `/api/memory/policy`: the retrieval policy of a scope — the one in force, the configured
//! one it started from, and every change with its reason — and changing or resetting it.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use metaclaw_memory::{RetrievalPolicy, db};
use metaclaw_store::Store;
use serde::Deserialize;
use serde_json::{Value, json};

use super::routes::{AdminState, error};
use crate::clock::unix_ms;

/// Revisions shown with the policy.
const HISTORY: usize = 50;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/memory/policy", get(show).put(change))
        .route("/api/memory/policy/reset", post(reset))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ScopeParam {
    scope: Option<String>,
}

async fn show(State(state): State<Arc<AdminState>>, Query(p): Query<ScopeParam>) -> Response {
    let Some(memory) = state.memory.clone() else {
        return off();
    };
    let scope = p.scope.unwrap_or_else(|| state.config.memory.scope.clone());
    let adaptive = state.config.memory.adaptive_policy;
    let db = state.db.clone();
    let done = tokio::task::spawn_blocking(move || {
        let store = Store::open_read_only(&db).map_err(|e| e.to_string())?;
        let conn = store.connection();
        let stored = db::load_policy(conn, &scope);
        let history = db::policy_history(conn, &scope, HISTORY).map_err(|e| e.to_string())?;
        let policies = memory.policies();
        let (policy, problem) = match stored {
            Ok(Some(p)) => (p, None),
            Ok(None) => (policies.base().clone(), None),
            Err(e) => (policies.base().clone(), Some(e.to_string())),
        };
        Ok::<_, String>(json!({
            "scope": scope,
            "policy": as_json(&policy),
            "configured": as_json(policies.base()),
            "adaptive": adaptive,
            "problem": problem,
            "history": history,
        }))
    })
    .await;
    match done {
        Ok(Ok(v)) => Json(v).into_response(),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, &e),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// Fields given replace the ones in force; the rest stay. Unknown fields and invalid values
/// are refused with what is wrong, and nothing changes.
async fn change(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ScopeParam>,
    Json(patch): Json<Value>,
) -> Response {
    let Some(memory) = state.memory.clone() else {
        return off();
    };
    let Value::Object(fields) = patch else {
        return error(
            StatusCode::BAD_REQUEST,
            "send a JSON object with the policy fields to change",
        );
    };
    let scope = p.scope.unwrap_or_else(|| state.config.memory.scope.clone());
    let db = state.db.clone();
    let done = tokio::task::spawn_blocking(move || {
        let mut store = Store::open(&db).map_err(server)?;
        let current = memory.policies().get(store.connection(), &scope);
        let mut merged = serde_json::to_value(current.as_ref()).map_err(server)?;
        merge(&mut merged, fields);
        let policy: RetrievalPolicy = serde_json::from_value(merged)
            .map_err(|e| (StatusCode::BAD_REQUEST, format!("invalid policy: {e}")))?;
        policy
            .validate()
            .map_err(|e| (StatusCode::BAD_REQUEST, e.to_string()))?;
        let now = unix_ms(SystemTime::now());
        let reason = "changed by the user";
        db::save_policy(store.connection_mut(), &scope, &policy, reason, now).map_err(server)?;
        memory.policies().set(&scope, policy.clone());
        Ok::<_, (StatusCode, String)>(json!({ "scope": scope, "policy": as_json(&policy) }))
    })
    .await;
    answer(done)
}

/// Back to the configured policy (recorded in the history like any change).
async fn reset(State(state): State<Arc<AdminState>>, Query(p): Query<ScopeParam>) -> Response {
    let Some(memory) = state.memory.clone() else {
        return off();
    };
    let scope = p.scope.unwrap_or_else(|| state.config.memory.scope.clone());
    let db = state.db.clone();
    let done = tokio::task::spawn_blocking(move || {
        let mut store = Store::open(&db).map_err(server)?;
        let base = memory.policies().base().clone();
        let now = unix_ms(SystemTime::now());
        let reason = "reset to the configured policy by the user";
        db::save_policy(store.connection_mut(), &scope, &base, reason, now).map_err(server)?;
        memory.policies().set(&scope, base.clone());
        Ok::<_, (StatusCode, String)>(json!({ "scope": scope, "policy": as_json(&base) }))
    })
    .await;
    answer(done)
}

/// Object fields merge one level deep (`kind_boosts`), everything else is replaced.
fn merge(into: &mut Value, fields: serde_json::Map<String, Value>) {
    for (k, v) in fields {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(old)), Value::Object(new)) => old.extend(new),
            (_, v) => {
                if let Value::Object(map) = into {
                    map.insert(k, v);
                }
            }
        }
    }
}

/// Through the text form, so 0.1 reads 0.1 (`to_value` widens f32 to 0.10000000149…).
fn as_json(p: &RetrievalPolicy) -> Value {
    serde_json::to_string(p)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

fn server(e: impl ToString) -> (StatusCode, String) {
    (StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

fn answer(done: Result<Result<Value, (StatusCode, String)>, tokio::task::JoinError>) -> Response {
    match done {
        Ok(Ok(v)) => Json(v).into_response(),
        Ok(Err((status, msg))) => error(status, &msg),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn off() -> Response {
    error(
        StatusCode::CONFLICT,
        "memory is off (memory.enabled: false)",
    )
}
