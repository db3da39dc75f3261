//! What the injector calls on every main turn: pinned units and query hits, rendered.

use std::sync::Arc;

use rusqlite::Connection;

use super::profile::{is_standing, standing};
use super::{Hit, Lexical, SearchQuery, pinned};
use crate::MemoryError;
use crate::adapt::Outcome;
use crate::policy::RetrievalPolicy;
use crate::render::{RenderedMemory, profile_fits, render_with_profile};
use crate::unit::MemoryUnit;

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
    let found = Prepared::new(conn, scope, query_text, Arc::new(policy.clone()), now_ms)?
        .complete(conn, similar)?;
    Ok(found.render(budget_tokens))
}

/// The first half of [`retrieve`]: everything that needs no embedding (pinned units, the
/// profile, full-text candidates), so a turn reads it while its question is being embedded.
#[derive(Debug)]
pub struct Prepared {
    policy: Arc<RetrievalPolicy>,
    now_ms: i64,
    always: Vec<MemoryUnit>,
    rules: Vec<MemoryUnit>,
    lexical: Lexical,
}

impl Prepared {
    /// Reads what the prompt `query_text` finds by its words. Read-only.
    pub fn new(
        conn: &Connection,
        scope: &str,
        query_text: &str,
        policy: Arc<RetrievalPolicy>,
        now_ms: i64,
    ) -> Result<Prepared, MemoryError> {
        let always = pinned(conn, scope, policy.max_pinned, now_ms)?;
        let rules = if policy.profile_tokens > 0 {
            standing(conn, scope, PROFILE_SCAN, now_ms)?
        } else {
            Vec::new()
        };
        // Only what the request is about: see `request`.
        let q = SearchQuery {
            scope: scope.to_owned(),
            text: super::request::topic(query_text),
            kinds: Vec::new(),
            limit: policy.max_units + policy.max_pinned,
            include_inactive: false,
        };
        let lexical = Lexical::gather(conn, &q, &policy, now_ms)?;
        Ok(Prepared {
            policy,
            now_ms,
            always,
            rules,
            lexical,
        })
    }

    /// Ranks the candidates with the units close in meaning (`similar`, possibly none) and
    /// settles the profile and the pinned share. Read-only.
    pub fn complete(
        self,
        conn: &Connection,
        similar: &[(String, f32)],
    ) -> Result<Found, MemoryError> {
        let Prepared {
            policy,
            now_ms,
            always,
            rules,
            lexical,
        } = self;
        let searched = lexical.searched();
        // A prompt is read by the model whatever it holds: what barely matches stays out.
        let hits = lexical.rank(
            conn,
            &policy,
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
        Ok(Found {
            policy,
            profile,
            pinned_units,
            hits,
            searched,
        })
    }
}

/// What a prompt's memory search found, before it is fitted to a budget.
#[derive(Debug)]
pub struct Found {
    policy: Arc<RetrievalPolicy>,
    profile: Vec<MemoryUnit>,
    pinned_units: Vec<MemoryUnit>,
    hits: Vec<Hit>,
    searched: bool,
}

impl Found {
    /// The memory section within `budget_tokens`, and what the retrieval found.
    pub fn render(&self, budget_tokens: usize) -> Retrieval {
        let rendered = render_with_profile(
            &self.profile,
            &self.pinned_units,
            &self.hits,
            budget_tokens,
            &self.policy,
        );
        let shown = rendered.as_ref().map_or(0, |r| {
            self.hits
                .iter()
                .filter(|h| !h.unit.pinned && r.ids.contains(&h.unit.id))
                .count()
        });
        let outcome = Outcome {
            searched: self.searched,
            matched: self.hits.iter().filter(|h| !h.unit.pinned).count(),
            shown,
        };
        Retrieval { rendered, outcome }
    }
}
