//! Read-only memory search: full-text candidates rescored with importance, recency,
//! confidence and kind, each hit explained.
//!
//! Nothing here writes to the database (access bookkeeping belongs to a background queue),
//! so search runs on read-only connections, in the GUI and in evaluation alike.

mod candidates;
mod df_cache;
mod forms;
mod profile;
mod reason;
mod request;
mod retrieve;
mod score;
mod semantic;
mod stats;
pub mod terms;

use std::collections::HashMap;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use crate::MemoryError;
use crate::policy::RetrievalPolicy;
use crate::unit::{Kind, MemoryUnit};

pub use candidates::{MAX_COMMON_TERMS, POSTINGS_BUDGET};
pub use profile::{is_standing, standing, standing_plan};
pub use retrieve::{Found, Prepared, Retrieval, retrieve, retrieve_for_prompt};
pub use score::Components;

/// Candidates fetched from full-text search per result wanted, before rescoring.
const POOL_FACTOR: usize = 8;
/// Most results one search returns, whatever the caller asks.
pub const MAX_LIMIT: usize = 200;

/// What to search for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchQuery {
    pub scope: String,
    /// Free user text; never interpreted as FTS syntax.
    pub text: String,
    /// Only these kinds; empty means all.
    #[serde(default)]
    pub kinds: Vec<Kind>,
    /// Most hits returned (at least 1, at most [`MAX_LIMIT`]).
    pub limit: usize,
    /// Also superseded, archived and expired units (for people browsing; never for prompts).
    #[serde(default)]
    pub include_inactive: bool,
}

/// A unit found by a search, with its score and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub unit: MemoryUnit,
    /// The sum of `components`' weighted parts.
    pub score: f32,
    pub components: Components,
    /// The query terms found in the unit (words, or stretches of CJK text).
    pub matched_terms: Vec<String>,
    /// A short sentence for people: "matched 'timezone', 'iso'; pinned; importance 0.9; …".
    pub reason: String,
}

/// Units of `q.scope` matching `q.text`, best first (ties by id, so the order is stable).
/// Read-only. A query with no searchable term returns no hits.
pub fn search(
    conn: &Connection,
    q: &SearchQuery,
    policy: &RetrievalPolicy,
    now_ms: i64,
) -> Result<Vec<Hit>, MemoryError> {
    search_with(conn, q, policy, now_ms, &[])
}

/// [`search`], with `similar`: units close to the query in meaning, as `(id, cosine)` from
/// an embedding index (its nearest few). They add their weighted cosine, relative to the
/// best one (see [`semantic_scale`]), to their score, and qualify without sharing a word.
///
/// Every unit sharing a term with the query, or among its nearest in meaning, is ranked,
/// however weakly it matches: a caller asking for ten hits gets ten when there are ten.
/// `policy.min_lexical_score` and `policy.min_similarity` are a prompt's cut-offs, applied
/// by [`retrieve`].
pub fn search_with(
    conn: &Connection,
    q: &SearchQuery,
    policy: &RetrievalPolicy,
    now_ms: i64,
    similar: &[(String, f32)],
) -> Result<Vec<Hit>, MemoryError> {
    search_above(conn, q, policy, now_ms, similar, 0.0, 0.0)
}

/// What a cosine is divided by before its weight applies: the best cosine among `similar`,
/// but never less than `min_similarity`. Cosines of related text sit in a narrow band
/// (about 0.35-0.6 for MiniLM-family models), so the raw value would weigh far less than
/// lexical relevance, which is relative to the best candidate; the floor keeps a query
/// with nothing close in meaning from lifting its best weak match to full weight.
fn semantic_scale(similar: &[(String, f32)], min_similarity: f32) -> f32 {
    similar
        .iter()
        .map(|(_, c)| *c)
        .fold(min_similarity, f32::max)
        .max(f32::MIN_POSITIVE)
}

/// The full-text half of a search: the query's terms, how common each is, and the units
/// holding them. It needs no embedding, so a turn gathers it while its question is still
/// being embedded, and ranks it ([`Lexical::rank`]) once the units close in meaning are known.
#[derive(Debug)]
pub struct Lexical {
    q: SearchQuery,
    parsed: terms::QueryTerms,
    all: Vec<terms::Term>,
    stats: Vec<stats::TermStat>,
    n_docs: u64,
    found: HashMap<String, candidates::Row>,
}

impl Lexical {
    /// The terms of `q.text` and the units holding them. Read-only.
    pub fn gather(
        conn: &Connection,
        q: &SearchQuery,
        policy: &RetrievalPolicy,
        now_ms: i64,
    ) -> Result<Lexical, MemoryError> {
        let parsed = terms::QueryTerms::parse(&q.text, policy.max_query_terms.max(1));
        let all = parsed.all();
        let (stats, n_docs) = if all.is_empty() {
            (Vec::new(), 0)
        } else {
            stats::lookup(conn, &all)?
        };
        let limit = q.limit.clamp(1, MAX_LIMIT);
        let found = if stats.iter().any(|s| s.piece.is_some()) {
            candidates::gather(conn, q, &all, &stats, limit * POOL_FACTOR, now_ms)?
        } else {
            Default::default()
        };
        Ok(Lexical {
            q: q.clone(),
            parsed,
            all,
            stats,
            n_docs,
            found,
        })
    }

    /// Whether the query had any term to search for.
    pub fn searched(&self) -> bool {
        !self.parsed.is_empty()
    }

    /// The hits, adding the units of `similar` (see [`search_with`]), keeping only units
    /// whose lexical score (relative to the best candidate's) reaches `min_lexical` or whose
    /// cosine reaches `min_similarity` (a unit with no cosine never qualifies by meaning).
    /// The cut-off comes before the limit, so the hits are the best of those that pass.
    pub(super) fn rank(
        self,
        conn: &Connection,
        policy: &RetrievalPolicy,
        now_ms: i64,
        similar: &[(String, f32)],
        min_lexical: f32,
        min_similarity: f32,
    ) -> Result<Vec<Hit>, MemoryError> {
        let Lexical {
            q,
            parsed,
            all,
            stats,
            n_docs,
            mut found,
        } = self;
        if parsed.is_empty() && similar.is_empty() {
            return Ok(Vec::new());
        }
        let limit = q.limit.clamp(1, MAX_LIMIT);
        // A cosine qualifies a unit on its own only when there is one.
        let close = |cosine: f32| cosine > 0.0 && cosine >= min_similarity;
        let near: Vec<(String, f32)> = similar.iter().filter(|(_, c)| close(*c)).cloned().collect();
        semantic::gather(conn, &q, &near, now_ms, &mut found)?;
        let idfs: Vec<f32> = stats.iter().map(|s| score::idf(s.df, n_docs)).collect();
        let cosines: HashMap<&str, f32> = similar.iter().map(|(id, c)| (id.as_str(), *c)).collect();
        let cosine_of = |id: &str| cosines.get(id).copied().unwrap_or(0.0);
        let scale = semantic_scale(similar, policy.min_similarity);

        let scored: Vec<(candidates::Row, Vec<bool>, f32, f32)> = found
            .into_values()
            .map(|row| {
                let present = terms::presence(&all, &row.text);
                let cov = score::coverage(&present, &idfs);
                let cosine = cosine_of(&row.id);
                (row, present, cov, cosine)
            })
            .filter(|(_, _, cov, cosine)| *cov > 0.0 || close(*cosine))
            .collect();
        // Relevance is relative to the best rule, preference or fact: a session digest
        // restating the request must not push what the user taught under `min_lexical`.
        let best_of = |digests: bool| {
            scored
                .iter()
                .filter(|(r, ..)| digests || r.kind != Kind::WorkingSummary)
                .map(|(_, _, c, _)| *c)
                .fold(0.0_f32, f32::max)
        };
        let best = match best_of(false) {
            b if b > 0.0 => b,
            _ => best_of(true),
        };
        let mut ranked: Vec<(f32, Components, candidates::Row, Vec<bool>)> = scored
            .into_iter()
            .filter_map(|(row, present, cov, cosine)| {
                let lexical = if best > 0.0 {
                    (cov / best).min(1.0)
                } else {
                    0.0
                };
                let qualifies = lexical >= min_lexical && cov > 0.0 || close(cosine);
                qualifies.then(|| {
                    let c = score::components(&row, lexical, cosine / scale, policy, now_ms);
                    (c.total(), c, row, present)
                })
            })
            .collect();
        // A session digest comes after every rule, preference and fact, whatever it scores:
        // it restates recent requests, so it matches them better than what the user taught.
        let digest = |r: &candidates::Row| r.kind == Kind::WorkingSummary;
        ranked.sort_by(|a, b| {
            digest(&a.2)
                .cmp(&digest(&b.2))
                .then_with(|| b.0.total_cmp(&a.0))
                .then_with(|| a.2.id.cmp(&b.2.id))
        });
        ranked.truncate(limit);

        let mut hits = Vec::with_capacity(ranked.len());
        for (score, components, row, present) in ranked {
            // Only the final hits are loaded in full.
            let Some(unit) = crate::db::get(conn, &row.id)? else {
                continue;
            };
            let matched_terms = terms::matched_terms(&parsed, &all, &present);
            let cosine = cosine_of(&row.id);
            hits.push(Hit {
                score,
                components,
                reason: reason::reason(&unit, &matched_terms, cosine, now_ms),
                matched_terms,
                unit,
            });
        }
        Ok(hits)
    }
}

/// [`search_with`] with a prompt's cut-offs (see [`Lexical::rank`]).
pub(super) fn search_above(
    conn: &Connection,
    q: &SearchQuery,
    policy: &RetrievalPolicy,
    now_ms: i64,
    similar: &[(String, f32)],
    min_lexical: f32,
    min_similarity: f32,
) -> Result<Vec<Hit>, MemoryError> {
    Lexical::gather(conn, q, policy, now_ms)?.rank(
        conn,
        policy,
        now_ms,
        similar,
        min_lexical,
        min_similarity,
    )
}

/// Pinned, active, unexpired units of `scope`, whatever the query: most important first,
/// then most recently edited, then by id. Read-only.
pub fn pinned(
    conn: &Connection,
    scope: &str,
    limit: usize,
    now_ms: i64,
) -> Result<Vec<MemoryUnit>, MemoryError> {
    let sql = "SELECT id FROM memory_units
         WHERE scope = ?1 AND pinned = 1 AND status = 'active'
           AND (expires_ms IS NULL OR expires_ms > ?2)
         ORDER BY importance DESC, updated_ms DESC, id LIMIT ?3";
    units_of(conn, sql, scope, limit, now_ms)
}

/// The units whose ids `sql` selects, given `(scope, now_ms, limit)`, in its order.
pub(super) fn units_of(
    conn: &Connection,
    sql: &str,
    scope: &str,
    limit: usize,
    now_ms: i64,
) -> Result<Vec<MemoryUnit>, MemoryError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let ids = conn
        .prepare_cached(sql)?
        .query_map(params![scope, now_ms, limit], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(unit) = crate::db::get(conn, &id)? {
            out.push(unit);
        }
    }
    Ok(out)
}
