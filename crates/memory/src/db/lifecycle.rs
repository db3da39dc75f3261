//! Status and pin changes: supersede, pin/unpin, archive (soft forget), restore, purge.

use rusqlite::{Connection, TransactionBehavior};
use serde_json::json;

use super::get::require;
use super::journal::{Action, write_event};
use super::save::save_change;
use crate::MemoryError;
use crate::unit::{MemoryUnit, Status};

/// Marks the active unit `old_id` as replaced by `new_id` (same scope), keeping it for
/// history.
pub fn supersede(
    conn: &mut Connection,
    old_id: &str,
    new_id: &str,
    actor: &str,
    now_ms: i64,
) -> Result<MemoryUnit, MemoryError> {
    if old_id == new_id {
        return Err(MemoryError::Invalid(format!(
            "unit {old_id} cannot supersede itself"
        )));
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let old = require(&tx, old_id)?;
    let new = require(&tx, new_id)?;
    if old.scope != new.scope {
        return Err(MemoryError::Invalid(format!(
            "unit {new_id} is in scope {:?}, not {:?}",
            new.scope, old.scope
        )));
    }
    if old.status != Status::Active {
        return Err(MemoryError::Invalid(format!(
            "unit {old_id} is {}, only an active unit can be superseded",
            old.status.as_str()
        )));
    }
    let mut next = old.clone();
    next.status = Status::Superseded;
    next.superseded_by = Some(new_id.to_owned());
    let detail = json!({"by": new_id});
    let next = commit(tx, &old, next, Action::Supersede, actor, now_ms, detail)?;
    Ok(next)
}

/// Pins or unpins; pinning an already pinned unit changes nothing.
pub fn set_pinned(
    conn: &mut Connection,
    id: &str,
    pinned: bool,
    actor: &str,
    now_ms: i64,
) -> Result<MemoryUnit, MemoryError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current = require(&tx, id)?;
    if current.pinned == pinned {
        return Ok(current);
    }
    let mut next = current.clone();
    next.pinned = pinned;
    let action = if pinned { Action::Pin } else { Action::Unpin };
    commit(tx, &current, next, action, actor, now_ms, json!({}))
}

/// Forgets softly: hidden from retrieval, restorable, purgeable.
pub fn archive(
    conn: &mut Connection,
    id: &str,
    actor: &str,
    now_ms: i64,
) -> Result<MemoryUnit, MemoryError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current = require(&tx, id)?;
    if current.status == Status::Archived {
        return Ok(current);
    }
    let mut next = current.clone();
    next.status = Status::Archived;
    let detail = json!({"from": current.status});
    commit(tx, &current, next, Action::Archive, actor, now_ms, detail)
}

/// Makes an archived or superseded unit active again (undoing a forget or a supersede).
pub fn restore(
    conn: &mut Connection,
    id: &str,
    actor: &str,
    now_ms: i64,
) -> Result<MemoryUnit, MemoryError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current = require(&tx, id)?;
    if current.status == Status::Active {
        return Ok(current);
    }
    let mut next = current.clone();
    next.status = Status::Active;
    next.superseded_by = None;
    let detail = json!({"from": current.status});
    commit(tx, &current, next, Action::Restore, actor, now_ms, detail)
}

/// Deletes the unit, its versions and (through the triggers) its FTS rows. The audit log
/// keeps a purge event naming the id but holding no content.
pub fn purge(conn: &mut Connection, id: &str, actor: &str, now_ms: i64) -> Result<(), MemoryError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let unit = require(&tx, id)?;
    tx.prepare_cached("DELETE FROM memory_units WHERE id = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM memory_versions WHERE memory_id = ?1")?
        .execute([id])?;
    let detail = json!({"kind": unit.kind, "status": unit.status, "version": unit.version});
    write_event(&tx, now_ms, &unit, Action::Purge, actor, detail)?;
    tx.commit()?;
    Ok(())
}

fn commit(
    tx: rusqlite::Transaction<'_>,
    current: &MemoryUnit,
    mut next: MemoryUnit,
    action: Action,
    actor: &str,
    now_ms: i64,
    detail: serde_json::Value,
) -> Result<MemoryUnit, MemoryError> {
    next.version = current.version + 1;
    next.updated_ms = now_ms;
    save_change(&tx, &next, current.version, action, actor, detail)?;
    tx.commit()?;
    Ok(next)
}
