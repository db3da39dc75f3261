//! What a learning job reads: a session's successful main turns after the last one it
//! already learned from. Each job keeps its own mark (`<job>.<session>` in the store's state),
//! so skill evolution and memory extraction move independently.

use metaclaw_store::{Store, TurnRow};

/// The mark's key for `job` (`skills.evolved_through`, `memory.extracted_through`).
pub fn mark_key(job: &str, session: &str) -> String {
    format!("{job}.{session}")
}

/// Successful main turns of `session` after `job`'s mark, oldest first. Blocking.
pub fn after_mark(store: &Store, job: &str, session: &str) -> Result<Vec<TurnRow>, String> {
    let done: Option<u64> = store
        .state_get(&mark_key(job, session))
        .map_err(|e| e.to_string())?
        .and_then(|v| v.parse().ok());
    let turns = store.session_turns(session).map_err(|e| e.to_string())?;
    Ok(turns
        .into_iter()
        .filter(|t| done.is_none_or(|d| t.turn_index > d))
        .filter(|t| t.turn_type == "main" && (200..300).contains(&t.status))
        .collect())
}
