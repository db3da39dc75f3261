//! Creating units.

use rusqlite::{Connection, TransactionBehavior, params};
use serde_json::json;

use super::id::new_id;
use super::journal::{Action, write_event, write_version};
use super::row::{signed, to_json};
use super::validate;
use crate::MemoryError;
use crate::unit::{MemoryUnit, NewUnit, Status};

/// Stores a new unit as version 1 and audits its creation.
pub fn insert(
    conn: &mut Connection,
    new: &NewUnit,
    actor: &str,
    now_ms: i64,
) -> Result<MemoryUnit, MemoryError> {
    validate::scope(&new.scope)?;
    validate::content(&new.content)?;
    validate::expiry(new.expires_ms)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let unit = MemoryUnit {
        id: new_id(&tx, now_ms)?,
        scope: new.scope.clone(),
        kind: new.kind,
        content: new.content.trim().to_owned(),
        summary: new.summary.trim().to_owned(),
        fact_key: validate::fact_key(new.fact_key.as_deref()),
        importance: validate::unit_interval(new.importance),
        confidence: validate::unit_interval(new.confidence),
        pinned: new.pinned,
        status: Status::Active,
        superseded_by: None,
        source: new.source,
        source_session: new.source_session.clone(),
        source_turn: new.source_turn,
        tags: validate::tags(&new.tags),
        entities: validate::entities(&new.entities),
        access_count: 0,
        last_accessed_ms: None,
        created_ms: now_ms,
        updated_ms: now_ms,
        expires_ms: new.expires_ms,
        version: 1,
    };
    write_row(&tx, &unit)?;
    write_version(&tx, &unit, actor)?;
    let detail = json!({"kind": unit.kind, "source": unit.source});
    write_event(&tx, now_ms, &unit, Action::Create, actor, detail)?;
    tx.commit()?;
    Ok(unit)
}

/// Inserts a complete unit as is (ids and counters included); import uses it too.
pub(crate) fn write_row(conn: &Connection, u: &MemoryUnit) -> Result<(), MemoryError> {
    conn.prepare_cached(
        "INSERT INTO memory_units (id, scope, kind, content, summary, fact_key, importance,
             confidence, pinned, status, superseded_by, source, source_session, source_turn,
             tags, entities, access_count, last_accessed_ms, created_ms, updated_ms,
             expires_ms, version)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
             ?18, ?19, ?20, ?21, ?22)",
    )?
    .execute(params![
        u.id,
        u.scope,
        u.kind.as_str(),
        u.content,
        u.summary,
        u.fact_key,
        f64::from(u.importance),
        f64::from(u.confidence),
        u.pinned,
        u.status.as_str(),
        u.superseded_by,
        u.source.as_str(),
        u.source_session,
        u.source_turn.map(signed).transpose()?,
        to_json(&u.tags),
        to_json(&u.entities),
        signed(u.access_count)?,
        u.last_accessed_ms,
        u.created_ms,
        u.updated_ms,
        u.expires_ms,
        signed(u.version)?,
    ])?;
    Ok(())
}
