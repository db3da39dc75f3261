//! What the injector calls on every main turn: pinned units and query hits, rendered.

use rusqlite::Connection;

use super::profile::{is_standing, standing};
use super::{SearchQuery, pinned, search_above};
use crate::MemoryError;
use crate::adapt::Outcome;
use crate::policy::RetrievalPolicy;
use crate::render::{RenderedMemory, profile_fits, render_with_profile};

/// Standing units read per turn to build the profile. More than fit any sensible
/// `profile_tokens`: reaching it means the profile is cut down to what the request needs.
const PROFILE_SCAN: usize = 64;

/// A turn's memory section and what the retrieval found (for the adaptive policy).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Retrieval {
    /// `None` when nothing is worth injecting.
    pub rendered: Option<RenderedMemory>,
    pub outcome: Outcome,
}

/// The memory section for a prompt whose retrieval query is `query_text`, within
/// `budget_tokens`; `None` when nothing is worth injecting. Read-only.
pub fn retrieve_for_prompt(
    conn: &Connection,
    scope: &str,
    query_text: &str,
    budget_tokens: usize,
    policy: &RetrievalPolicy,
    now_ms: i64,
) -> Result<Option<RenderedMemory>, MemoryError> {
    Ok(retrieve(conn, scope, query_text, budget_tokens, policy, now_ms, &[])?.rendered)
}

/// [`retrieve_for_prompt`] with units close in meaning (`similar`, see
/// [`super::search_with`]), also saying what was found. Read-only. Only hits reaching
/// `policy.min_lexical_score` (or `min_similarity`) are considered.
///
/// The standing-rules profile (see `profile`) comes first: whole while it fits
/// `policy.profile_tokens`, else only its units the query found, best first. Pinned units
/// that match the query are placed before other pinned units, so when more are pinned than
/// `max_pinned` allows, the relevant ones win. Pinned units are rendered only in the pinned
/// share, never as ordinary hits.
pub fn retrieve(
    conn: &Connection,
    scope: &str,
    query_text: &str,
    budget_tokens: usize,
    policy: &RetrievalPolicy,
    now_ms: i64,
    similar: &[(String, f32)],
) -> Result<Retrieval, MemoryError> {
    let always = pinned(conn, scope, policy.max_pinned, now_ms)?;
    let rules = if policy.profile_tokens > 0 {
        standing(conn, scope, PROFILE_SCAN, now_ms)?
    } else {
        Vec::new()
    };
    // Only what the request is about: see `request`.
    let query_text = &super::request::topic(query_text);
    let q = SearchQuery {
        scope: scope.to_owned(),
        text: query_text.to_owned(),
        kinds: Vec::new(),
        limit: policy.max_units + policy.max_pinned,
        include_inactive: false,
    };
    // A prompt is read by the model whatever it holds: what barely matches stays out.
    let hits = search_above(
        conn,
        &q,
        policy,
        now_ms,
        similar,
        policy.min_lexical_score,
        policy.min_similarity,
    )?;
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
    let profile = if rules.len() < PROFILE_SCAN && profile_fits(&rules, policy.profile_tokens) {
        rules
    } else {
        hits.iter()
            .filter(|h| is_standing(h.unit.kind) && !h.unit.pinned)
            .map(|h| h.unit.clone())
            .collect()
    };
    let rendered = render_with_profile(&profile, &pinned_units, &hits, budget_tokens, policy);
    let shown = rendered.as_ref().map_or(0, |r| {
        hits.iter()
            .filter(|h| !h.unit.pinned && r.ids.contains(&h.unit.id))
            .count()
    });
    let outcome = Outcome {
        searched: !super::terms::QueryTerms::parse(query_text, policy.max_query_terms.max(1))
            .is_empty(),
        matched: hits.iter().filter(|h| !h.unit.pinned).count(),
        shown,
    };
    Ok(Retrieval { rendered, outcome })
}
