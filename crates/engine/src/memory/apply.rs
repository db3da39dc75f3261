//! Turning reconciliation decisions into database changes, in one place for every producer
//! (the extraction model, the rules, the working summary).

use metaclaw_memory::db::{self, UnitPatch};
use metaclaw_memory::{Candidate, Decision, MemoryError, NewUnit, Source};
use rusqlite::Connection;
use serde::Serialize;

/// What one extraction changed.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Applied {
    pub added: Vec<String>,
    pub updated: Vec<String>,
    /// (old, new) ids.
    pub superseded: Vec<(String, String)>,
    pub ignored: usize,
}

pub struct Origin<'a> {
    pub scope: &'a str,
    pub session: &'a str,
    pub source: Source,
    pub now_ms: i64,
}

const ACTOR: &str = "extractor";

pub fn apply(
    conn: &mut Connection,
    decisions: Vec<(Candidate, Decision)>,
    origin: &Origin<'_>,
) -> Result<Applied, MemoryError> {
    let mut out = Applied::default();
    for (candidate, decision) in decisions {
        match decision {
            Decision::Ignore { .. } => out.ignored += 1,
            Decision::Add | Decision::AddBesidePinned { .. } => {
                let unit = db::insert(conn, &new_unit(&candidate, origin), ACTOR, origin.now_ms)?;
                out.added.push(unit.id);
            }
            Decision::Supersede { old_id } => {
                let unit = db::insert(conn, &new_unit(&candidate, origin), ACTOR, origin.now_ms)?;
                db::supersede(conn, &old_id, &unit.id, ACTOR, origin.now_ms)?;
                out.superseded.push((old_id, unit.id));
            }
            Decision::Update { id, content } => {
                let patch = UnitPatch {
                    content: Some(content),
                    ..UnitPatch::default()
                };
                db::update(conn, &id, &patch, ACTOR, origin.now_ms, None)?;
                out.updated.push(id);
            }
        }
    }
    Ok(out)
}

fn new_unit(c: &Candidate, origin: &Origin<'_>) -> NewUnit {
    NewUnit {
        scope: origin.scope.to_string(),
        kind: c.kind,
        content: c.content.clone(),
        summary: String::new(),
        fact_key: c.fact_key.clone(),
        importance: c.importance,
        confidence: c.confidence,
        pinned: false,
        source: origin.source,
        source_session: Some(origin.session.to_string()),
        source_turn: c.source_turn,
        tags: c.tags.clone(),
        entities: Vec::new(),
        expires_ms: None,
    }
}
