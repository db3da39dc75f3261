//! One extraction: a session's turns not yet read → candidate memories (the extraction
//! model, or the rules without one) → reconciled with what the scope already knows → stored.

use std::path::Path;
use std::time::SystemTime;

use metaclaw_memory::db;
use metaclaw_memory::extract::{self, TurnText};
use metaclaw_memory::{
    Candidate, MemoryError, MemoryUnit, RetrievalPolicy, SearchQuery, Source, reconcile_batch,
    search,
};
use rusqlite::Connection;
use serde::Serialize;

use super::apply::{Applied, Origin, apply};
use super::error::MemoryServiceError;
use crate::clock::unix_ms;
use crate::learned_turns;
use crate::learned_turns::digests;
use crate::llm::calls::Purpose;
use crate::llm::pacing::{Decision, MAX_ATTEMPTS, Pacing};
use crate::llm::{self, Completion, Endpoint, Failure};
use crate::recorder::RecorderHandle;
use crate::store_access;

/// Units the extraction model is shown so it reuses their slots.
const KNOWN: u32 = 40;
/// Similar units each candidate is reconciled against.
const SIMILAR: usize = 5;
const MAX_TOKENS: u32 = 2000;
/// Rule candidates kept from a backlog older than the model's window (the newest win): a
/// session the model could not keep up with is still read whole, within bounded memory.
const MAX_OLDER_CANDIDATES: usize = 500;

/// What an extraction did, as the compatibility routes and the CLI report it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Extracted {
    pub session_id: String,
    pub scope: String,
    pub turns: usize,
    /// `model` or `rules`.
    pub extractor: String,
    #[serde(flatten)]
    pub applied: Applied,
    /// Proposals the model made that were not usable, with the reason.
    pub rejected: Vec<(String, String)>,
    pub error: Option<String>,
    /// Why the rules read these turns although a model is configured (it kept failing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The model is backing off after failures: nothing was read, the turns wait.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub waiting: bool,
}

impl Extracted {
    pub fn added(&self) -> usize {
        self.applied.added.len() + self.applied.superseded.len()
    }
}

pub struct Extractor<'a> {
    pub db: &'a Path,
    pub recorder: &'a RecorderHandle,
    pub http: &'a reqwest::Client,
    pub endpoint: Option<&'a Endpoint>,
    pub pacing: &'a Pacing,
}

/// Turns of `session` after the last extraction, and the scope they belong to.
struct Pending {
    /// What the rules found in the turns older than the window sent to the model.
    older: Vec<Candidate>,
    /// How many turns that was.
    older_turns: usize,
    /// What the model is shown.
    turns: Vec<TurnText>,
    scope: String,
    through: Option<u64>,
    known: Vec<MemoryUnit>,
}

impl Extractor<'_> {
    /// Extracts from a session's new turns; `last` adds the session's working summary.
    /// `scope` overrides the scope the turns were recorded in (the compatibility routes'
    /// explicit `scope`). A failure (model down, unusable answer) stores nothing and leaves
    /// the turns for the next attempt (the same stretch, not grown, once the back-off
    /// allows); after [`MAX_ATTEMPTS`] the rules read them instead, as they do while the
    /// model keeps failing. Nothing is lost.
    pub async fn session(
        &self,
        session_id: &str,
        last: bool,
        scope: Option<&str>,
        explicit: bool,
    ) -> Extracted {
        let mut out = Extracted {
            session_id: session_id.to_string(),
            ..Extracted::default()
        };
        let decision = match self.endpoint {
            Some(_) => self.pacing.decide(session_id, explicit),
            None => Decision::Call { through: None },
        };
        let limit = match decision {
            Decision::Call { through } => through,
            Decision::Fallback => None,
            Decision::Wait => {
                out.waiting = true;
                return out;
            }
        };
        let pending = match self.pending(session_id, scope, limit).await {
            Ok(p) => p,
            Err(e) => {
                out.error = Some(e.to_string());
                return out;
            }
        };
        out.scope = pending.scope.clone();
        out.turns = pending.turns.len() + pending.older_turns;
        if out.turns == 0 {
            return out;
        }
        let all_by_rules = || {
            let mut c = pending.older.clone();
            c.extend(extract::extract_rules(&pending.turns));
            c
        };
        let (mut candidates, source) = match (self.endpoint, decision) {
            (Some(_), Decision::Fallback) => {
                let e = self.pacing.health().last_error.unwrap_or_default();
                out.fallback = Some(format!(
                    "the extraction model failed {MAX_ATTEMPTS} times in a row and is backing off; the last failure: {e}"
                ));
                (all_by_rules(), Source::Rules)
            }
            (Some(ep), _) => match self.ask_model(ep, &pending).await {
                Ok((mut candidates, rejected)) => {
                    self.pacing.succeeded(session_id);
                    out.rejected = rejected;
                    candidates.extend(pending.older.iter().cloned());
                    (candidates, Source::Extracted)
                }
                Err(Failure::Call(e)) => {
                    if !self.pacing.failed(session_id, pending.through, &e) {
                        out.extractor = "model".into();
                        out.error = Some(e);
                        return out;
                    }
                    let reason = format!(
                        "the extraction model failed {MAX_ATTEMPTS} times on these turns; the last failure: {e}"
                    );
                    self.pacing.gave_up(&reason);
                    out.fallback = Some(reason);
                    (all_by_rules(), Source::Rules)
                }
                Err(Failure::Unusable(e)) => {
                    let e = format!("the extraction model's answer was not usable: {e}");
                    self.pacing.unusable(session_id, &e);
                    let reason = format!("given up on these turns, the rules read them: {e}");
                    self.pacing.gave_up(&reason);
                    out.fallback = Some(reason);
                    (all_by_rules(), Source::Rules)
                }
            },
            (None, _) => (all_by_rules(), Source::Rules),
        };
        out.extractor = match source {
            Source::Extracted => "model".into(),
            _ => "rules".into(),
        };
        // A session that taught nothing leaves no digest: a routine session's summary only
        // restates its requests, and would be found for them instead of what was taught.
        if last
            && !candidates.is_empty()
            && let Some(summary) = extract::working_summary(&pending.turns)
        {
            // The summary is of the newest turns, whoever read them.
            candidates.push(summary);
        }
        match self.store(session_id, &pending, candidates, source).await {
            Ok(applied) => out.applied = applied,
            Err(e) => out.error = Some(e.to_string()),
        }
        out
    }

    /// `limit`: no turn after it (a failed stretch is offered again as it was).
    async fn pending(
        &self,
        session_id: &str,
        scope: Option<&str>,
        limit: Option<u64>,
    ) -> Result<Pending, MemoryServiceError> {
        let recorder = self.recorder.clone();
        let db = self.db.to_path_buf();
        let session = session_id.to_string();
        let chosen = scope.map(str::to_owned);
        // The session's last turn may still be in the recorder's queue.
        tokio::task::spawn_blocking(move || recorder.flush()).await??;
        store_access::read(db, move |store| {
            let backlog =
                learned_turns::backlog(store, JOB, &session, limit, learned_turns::WINDOW_TURNS)?;
            let scope = chosen
                .or_else(|| backlog.newest.last().map(|t| t.scope.clone()))
                .unwrap_or_default();
            let through = backlog.through();
            let read_texts = |rows: &[metaclaw_store::TurnRow]| -> Vec<TurnText> {
                digests(rows)
                    .into_iter()
                    .map(|(t, d)| TurnText {
                        user: d.user,
                        assistant: d.assistant,
                        session_id: session.clone(),
                        turn_index: t.turn_index,
                    })
                    .collect()
            };
            let mut older = Vec::new();
            backlog.for_each_older_page(store, &session, |page| {
                let texts = read_texts(&page);
                older.extend(extract::extract_rules(&texts));
                if older.len() > MAX_OLDER_CANDIDATES {
                    older.drain(..older.len() - MAX_OLDER_CANDIDATES);
                }
            })?;
            let turns = read_texts(&backlog.newest);
            let known = if scope.is_empty() {
                Vec::new()
            } else {
                db::active_in_scope(store.connection(), &scope, None, KNOWN)?
            };
            let (beyond, turns) =
                learned_turns::newest_window(turns, |t| t.user.len() + t.assistant.len());
            older.extend(extract::extract_rules(&beyond));
            Ok(Pending {
                older,
                older_turns: backlog.older + beyond.len(),
                turns,
                scope,
                through,
                known,
            })
        })
        .await
    }

    async fn ask_model(
        &self,
        ep: &Endpoint,
        pending: &Pending,
    ) -> Result<(Vec<Candidate>, Vec<(String, String)>), Failure> {
        let (system, user) = extract::prompt(&pending.turns, &pending.known);
        let request = Completion {
            system,
            user,
            max_tokens: MAX_TOKENS,
            json_schema: Some(("memories".into(), extract::schema())),
        };
        let parsed =
            llm::complete_parsed(Purpose::Extraction, self.http, ep, &request, extract::parse)
                .await?;
        Ok((parsed.candidates, parsed.rejected))
    }

    /// Reconciles and writes in one blocking step, then moves the session's mark.
    async fn store(
        &self,
        session_id: &str,
        pending: &Pending,
        candidates: Vec<Candidate>,
        source: Source,
    ) -> Result<Applied, MemoryServiceError> {
        let db = self.db.to_path_buf();
        let (session, scope, through) = (
            session_id.to_string(),
            pending.scope.clone(),
            pending.through,
        );
        store_access::write(db, move |store| {
            let now = unix_ms(SystemTime::now());
            let decisions = {
                let conn = store.connection();
                reconcile_batch(candidates, |c| similar(conn, &scope, c, now))
            };
            let origin = Origin {
                scope: &scope,
                session: &session,
                source,
                now_ms: now,
            };
            let applied = apply(store.connection_mut(), decisions, &origin)?;
            if let Some(t) = through {
                store.state_set(&learned_turns::mark_key(JOB, &session), &t.to_string())?;
            }
            Ok(applied)
        })
        .await
    }
}

/// The units a candidate is reconciled against: those holding its slot, and the most
/// similar by full-text search. A search failure only narrows the comparison.
fn similar(conn: &Connection, scope: &str, c: &Candidate, now_ms: i64) -> Vec<MemoryUnit> {
    let mut units = match &c.fact_key {
        Some(key) => db::by_fact_key(conn, scope, key).unwrap_or_default(),
        None => Vec::new(),
    };
    let q = SearchQuery {
        scope: scope.to_string(),
        text: c.content.clone(),
        kinds: vec![c.kind],
        limit: SIMILAR,
        include_inactive: false,
    };
    let found: Result<Vec<_>, MemoryError> = search(conn, &q, &RetrievalPolicy::default(), now_ms);
    for hit in found.unwrap_or_default() {
        if !units.iter().any(|u| u.id == hit.unit.id) {
            units.push(hit.unit);
        }
    }
    units
}

/// This job's mark in `learned_turns`.
pub(crate) const JOB: &str = "memory.extracted_through";
