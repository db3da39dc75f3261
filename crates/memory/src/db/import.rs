//! JSONL import: the inverse of the export, idempotent by id.

use std::io::BufRead;

use rusqlite::{Connection, TransactionBehavior};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::get::get;
use super::insert::write_row;
use super::journal::{Action, write_event, write_version};
use super::validate;
use crate::MemoryError;
use crate::unit::MemoryUnit;

/// Longest id accepted from a file; real ids are 20 characters.
const MAX_ID_CHARS: usize = 128;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportReport {
    pub imported: u64,
    /// Lines whose id is already stored (so importing twice changes nothing).
    pub skipped_existing: u64,
    /// (1-based line number, reason) for every line that could not be imported.
    pub errors: Vec<(u64, String)>,
}

/// Imports one unit per line, keeping ids, timestamps, counters, pinned and status. Bad
/// lines are reported and skipped; the rest commit together in one transaction.
pub fn import_jsonl(
    conn: &mut Connection,
    mut reader: impl BufRead,
    actor: &str,
    now_ms: i64,
) -> Result<ImportReport, MemoryError> {
    let mut tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut report = ImportReport::default();
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line_no += 1;
        let Ok(line) = std::str::from_utf8(&buf) else {
            report.errors.push((line_no, "not UTF-8".to_owned()));
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        let unit = match parse(line) {
            Ok(unit) => unit,
            Err(msg) => {
                report.errors.push((line_no, msg));
                continue;
            }
        };
        if get(&tx, &unit.id)?.is_some() {
            report.skipped_existing += 1;
            continue;
        }
        // A savepoint per line: a row the database refuses is reported, not fatal.
        let sp = tx.savepoint()?;
        match store(&sp, &unit, actor, now_ms) {
            Ok(()) => {
                sp.commit()?;
                report.imported += 1;
            }
            Err(MemoryError::Sql(e)) => report.errors.push((line_no, e.to_string())),
            Err(e) => return Err(e),
        }
    }
    tx.commit()?;
    Ok(report)
}

/// A line as a normalised, validated unit, or why not.
fn parse(line: &str) -> Result<MemoryUnit, String> {
    let mut unit: MemoryUnit =
        serde_json::from_str(line).map_err(|e| format!("not a memory unit: {e}"))?;
    let id_ok = !unit.id.is_empty()
        && unit.id.chars().count() <= MAX_ID_CHARS
        && !unit.id.chars().any(|c| c.is_whitespace() || c.is_control());
    if !id_ok {
        return Err(format!("bad id {:?}", unit.id));
    }
    validate::scope(&unit.scope).map_err(|e| e.to_string())?;
    validate::content(&unit.content).map_err(|e| e.to_string())?;
    validate::expiry(unit.expires_ms).map_err(|e| e.to_string())?;
    unit.importance = validate::unit_interval(unit.importance);
    unit.confidence = validate::unit_interval(unit.confidence);
    unit.tags = validate::tags(&unit.tags);
    unit.entities = validate::entities(&unit.entities);
    unit.fact_key = validate::fact_key(unit.fact_key.as_deref());
    unit.version = unit.version.max(1);
    Ok(unit)
}

fn store(
    conn: &Connection,
    unit: &MemoryUnit,
    actor: &str,
    now_ms: i64,
) -> Result<(), MemoryError> {
    write_row(conn, unit)?;
    write_version(conn, unit, actor)?;
    let detail = json!({"version": unit.version, "status": unit.status});
    write_event(conn, now_ms, unit, Action::Import, actor, detail)
}
