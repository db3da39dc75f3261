//! One conversation through both methods: a fresh database with one unit per turn, then
//! every question searched by MetaClaw and by the BM25 baseline.

use std::collections::HashMap;

use anyhow::{Context, Result};
use metaclaw_memory::{Kind, NewUnit, RetrievalPolicy, SearchQuery, Source, db, search_with};
use metaclaw_store::Store;
use serde::Serialize;

use super::bm25::Bm25;
use super::data::{Category, Conversation, day_ms};
use super::vectors::QueryVectors;

/// Hits kept per question: recall is measured at 5 and 10.
pub const LIMIT: usize = 10;
/// Hits of the deeper MetaClaw search that tells, for a miss, whether the evidence was
/// ranked lower or not found at all.
pub const DEEP_LIMIT: usize = 200;
/// Nearest units passed to search as `similar`.
pub const SIMILAR_K: usize = 50;
const SCOPE: &str = "recall";
const ACTOR: &str = "recall-bench";
const DAY_MS: i64 = 86_400_000;
/// A session starts at 09:00 (UTC) on its date; its turns are two minutes apart.
const SESSION_START_MS: i64 = 9 * 3_600_000;
const TURN_GAP_MS: i64 = 120_000;
/// The semantic weight of the engine's `hybrid` retrieval mode.
pub const HYBRID_SEMANTIC_WEIGHT: f32 = 0.5;
/// The similarity floor the engine uses with its local model (MiniLM-family cosines of a
/// question and the fact answering it are about 0.35-0.5).
pub const LOCAL_MIN_SIMILARITY: f32 = 0.35;

/// The policy searches run with: the default one, with the hybrid mode's semantic weight
/// when there is a semantic source.
pub fn policy(vectors: &dyn QueryVectors) -> RetrievalPolicy {
    let mut p = RetrievalPolicy::default();
    if vectors.is_active() {
        p.semantic_weight = HYBRID_SEMANTIC_WEIGHT;
    }
    p
}

/// What both methods returned for one question.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionResult {
    pub conversation: String,
    pub id: String,
    pub category: Category,
    pub lang: String,
    pub cross_lingual: bool,
    pub question: String,
    pub evidence: Vec<String>,
    /// Turn ids of MetaClaw's hits, best first (at most [`LIMIT`]; fewer when fewer qualify).
    pub metaclaw: Vec<String>,
    /// Turn ids of the baseline's hits, best first (at most [`LIMIT`]).
    pub bm25: Vec<String>,
    /// Per evidence turn, its 1-based rank in a MetaClaw search for [`DEEP_LIMIT`] hits
    /// (None: not returned at all).
    pub metaclaw_deep_rank: Vec<Option<usize>>,
    /// Per evidence turn, its 1-based rank in the baseline's full ranking (None: no shared
    /// token).
    pub bm25_rank: Vec<Option<usize>>,
    /// MetaClaw's explanation of its first hit.
    pub metaclaw_top_reason: Option<String>,
}

/// Milliseconds of a conversation's "now": the day after its last session.
pub fn now_ms(conv: &Conversation) -> Result<i64> {
    let last = conv
        .sessions
        .iter()
        .map(|s| day_ms(&s.date))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .max()
        .unwrap_or(0);
    Ok(last + DAY_MS + SESSION_START_MS)
}

/// Stores `conv`'s turns in a fresh temporary database and runs its questions.
pub fn run_conversation(
    conv: &Conversation,
    vectors: &mut dyn QueryVectors,
    policy: &RetrievalPolicy,
) -> Result<Vec<QuestionResult>> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("metaclaw.db")).context("opening the store")?;
    let mut turn_of_unit: HashMap<String, String> = HashMap::new();
    let mut units: Vec<(String, String)> = Vec::new();
    let mut turn_ids: Vec<String> = Vec::new();
    for session in &conv.sessions {
        let start = day_ms(&session.date)? + SESSION_START_MS;
        for (i, turn) in session.turns.iter().enumerate() {
            let new = NewUnit {
                scope: SCOPE.to_owned(),
                kind: Kind::Episodic,
                content: turn.text(),
                summary: String::new(),
                fact_key: None,
                importance: 0.5,
                confidence: 1.0,
                pinned: false,
                source: Source::Import,
                source_session: Some(session.id.clone()),
                source_turn: Some(i as u64 + 1),
                tags: Vec::new(),
                entities: Vec::new(),
                expires_ms: None,
            };
            let at = start + i as i64 * TURN_GAP_MS;
            let unit = db::insert(store.connection_mut(), &new, ACTOR, at)
                .with_context(|| format!("storing turn {}", turn.id))?;
            turn_of_unit.insert(unit.id.clone(), turn.id.clone());
            units.push((unit.id, unit.content));
            turn_ids.push(turn.id.clone());
        }
    }
    let baseline = Bm25::new(units.iter().map(|(_, text)| text.as_str()));
    vectors.index(&units)?;
    let now = now_ms(conv)?;
    let conn = store.connection();
    let turn_id = |unit_id: &str| turn_of_unit.get(unit_id).cloned();

    let mut out = Vec::with_capacity(conv.questions.len());
    for q in &conv.questions {
        let similar = vectors.similar(&q.question, SIMILAR_K)?;
        let search = |limit| {
            let query = SearchQuery {
                scope: SCOPE.to_owned(),
                text: q.question.clone(),
                kinds: vec![],
                limit,
                include_inactive: false,
            };
            search_with(conn, &query, policy, now, &similar)
                .with_context(|| format!("searching for {}", q.id))
        };
        let hits = search(LIMIT)?;
        let deep: Vec<String> = search(DEEP_LIMIT)?
            .iter()
            .filter_map(|h| turn_id(&h.unit.id))
            .collect();
        let ranked: Vec<String> = baseline
            .rank(&q.question)
            .into_iter()
            .filter_map(|(i, _)| turn_ids.get(i).cloned())
            .collect();
        let rank_in = |list: &[String], e: &String| list.iter().position(|t| t == e).map(|p| p + 1);
        out.push(QuestionResult {
            conversation: conv.id.clone(),
            id: q.id.clone(),
            category: q.category,
            lang: q.lang.clone(),
            cross_lingual: q.cross_lingual,
            question: q.question.clone(),
            evidence: q.evidence.clone(),
            metaclaw: hits.iter().filter_map(|h| turn_id(&h.unit.id)).collect(),
            bm25: ranked.iter().take(LIMIT).cloned().collect(),
            metaclaw_deep_rank: q.evidence.iter().map(|e| rank_in(&deep, e)).collect(),
            bm25_rank: q.evidence.iter().map(|e| rank_in(&ranked, e)).collect(),
            metaclaw_top_reason: hits.first().map(|h| h.reason.clone()),
        });
    }
    Ok(out)
}
