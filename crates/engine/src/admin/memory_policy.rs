//! `/api/memory/policy`: the retrieval policy of a scope — the one in force, the configured
//! one it started from, and every change with its reason — and changing or resetting it.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use metaclaw_memory::{RetrievalPolicy, db};
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::memory::{ScopeParam, memory};
use super::routes::AdminState;
use crate::clock::unix_ms;
use crate::store_access;

/// Revisions shown with the policy.
const HISTORY: usize = 50;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/memory/policy", get(show).put(change))
        .route("/api/memory/policy/reset", post(reset))
}

async fn show(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ScopeParam>,
) -> Result<Json<Value>, ApiError> {
    let memory = memory(&state)?;
    let scope = p.scope.unwrap_or_else(|| state.config.memory.scope.clone());
    let adaptive = state.config.memory.adaptive_policy;
    store_access::read(state.db.clone(), move |store| {
        let conn = store.connection();
        let stored = db::load_policy(conn, &scope);
        // A history that cannot be read is the server's, whatever the memory error says.
        let history = db::policy_history(conn, &scope, HISTORY).map_err(ApiError::internal)?;
        let policies = memory.policies();
        let (policy, problem) = match stored {
            Ok(Some(p)) => (p, None),
            Ok(None) => (policies.base().clone(), None),
            Err(e) => (policies.base().clone(), Some(e.to_string())),
        };
        Ok(Json(json!({
            "scope": scope,
            "policy": as_json(&policy),
            "configured": as_json(policies.base()),
            "adaptive": adaptive,
            "problem": problem,
            "history": history,
        })))
    })
    .await
}

/// Fields given replace the ones in force; the rest stay. Unknown fields and invalid values
/// are refused with what is wrong, and nothing changes.
async fn change(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ScopeParam>,
    Json(patch): Json<Value>,
) -> Result<Json<Value>, ApiError> {
    let memory = memory(&state)?;
    let Value::Object(fields) = patch else {
        return Err(ApiError::BadRequest(
            "send a JSON object with the policy fields to change".into(),
        ));
    };
    let scope = p.scope.unwrap_or_else(|| state.config.memory.scope.clone());
    store_access::write(state.db.clone(), move |store| {
        let current = memory.policies().get(store.connection(), &scope);
        let mut merged = serde_json::to_value(current.as_ref()).map_err(ApiError::internal)?;
        merge(&mut merged, fields);
        let policy: RetrievalPolicy = serde_json::from_value(merged)
            .map_err(|e| ApiError::BadRequest(format!("invalid policy: {e}")))?;
        policy
            .validate()
            .map_err(|e| ApiError::BadRequest(e.to_string()))?;
        let now = unix_ms(SystemTime::now());
        let reason = "changed by the user";
        db::save_policy(store.connection_mut(), &scope, &policy, reason, now)
            .map_err(ApiError::internal)?;
        memory.policies().set(&scope, policy.clone());
        Ok(Json(json!({ "scope": scope, "policy": as_json(&policy) })))
    })
    .await
}

/// Back to the configured policy (recorded in the history like any change).
async fn reset(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ScopeParam>,
) -> Result<Json<Value>, ApiError> {
    let memory = memory(&state)?;
    let scope = p.scope.unwrap_or_else(|| state.config.memory.scope.clone());
    store_access::write(state.db.clone(), move |store| {
        let base = memory.policies().base().clone();
        let now = unix_ms(SystemTime::now());
        let reason = "reset to the configured policy by the user";
        db::save_policy(store.connection_mut(), &scope, &base, reason, now)
            .map_err(ApiError::internal)?;
        memory.policies().set(&scope, base.clone());
        Ok(Json(json!({ "scope": scope, "policy": as_json(&base) })))
    })
    .await
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
