//! What the injector calls on every main turn: pinned units and query hits, rendered.

use rusqlite::Connection;

use super::{SearchQuery, pinned, search};
use crate::MemoryError;
use crate::policy::RetrievalPolicy;
use crate::render::{RenderedMemory, render_memories};

/// The memory section for a prompt whose retrieval query is `query_text`, within
/// `budget_tokens`; `None` when nothing is worth injecting. Read-only.
///
/// Pinned units that match the query are placed before other pinned units, so when more are
/// pinned than `max_pinned` allows, the relevant ones win. Pinned units are rendered only in
/// the pinned share, never as ordinary hits.
pub fn retrieve_for_prompt(
    conn: &Connection,
    scope: &str,
    query_text: &str,
    budget_tokens: usize,
    policy: &RetrievalPolicy,
    now_ms: i64,
) -> Result<Option<RenderedMemory>, MemoryError> {
    let always = pinned(conn, scope, policy.max_pinned, now_ms)?;
    let q = SearchQuery {
        scope: scope.to_owned(),
        text: query_text.to_owned(),
        kinds: Vec::new(),
        limit: policy.max_units + policy.max_pinned,
        include_inactive: false,
    };
    let hits = search(conn, &q, policy, now_ms)?;
    let mut pinned_units: Vec<_> = hits
        .iter()
        .filter(|h| h.unit.pinned)
        .map(|h| h.unit.clone())
        .collect();
    for unit in always {
        if !pinned_units.iter().any(|u| u.id == unit.id) {
            pinned_units.push(unit);
        }
    }
    Ok(render_memories(&pinned_units, &hits, budget_tokens, policy))
}
