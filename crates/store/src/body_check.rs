//! Checking the stored parts for [`crate::Store::integrity_check`]: each rebuilds to the text
//! its hash names, and its reference count matches the references actually stored (a count
//! too high leaks a part, one too low would let retention delete a part still in use).

use std::collections::HashMap;

use rusqlite::Connection;

use crate::body_parts::{Rebuilder, part_ids};
use crate::error::StoreError;

/// At most this many findings are listed.
const MAX_FINDINGS: usize = 20;

/// Each part that does not rebuild to its hash, each mismatch between `body_parts.refs` and
/// the references held by bodies, injected blocks and parts, and each body that cannot be
/// decoded.
pub(crate) fn body_part_findings(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut findings = Vec::new();
    let mut counted: HashMap<i64, i64> = HashMap::new();
    let mut count = |what: String, stored: &[u8], findings: &mut Vec<String>| match part_ids(stored)
    {
        Ok(ids) => ids
            .into_iter()
            .for_each(|id| *counted.entry(id).or_default() += 1),
        Err(detail) => findings.push(format!("{what} cannot be decoded: {detail}")),
    };
    let mut stmt = conn.prepare(
        "SELECT id, request_body, reply_body FROM turns
         WHERE request_body IS NOT NULL OR reply_body IS NOT NULL",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        for column in [1, 2] {
            if let Some(body) = row.get::<_, Option<Vec<u8>>>(column)? {
                count(format!("turn {id}'s body"), &body, &mut findings);
            }
        }
    }
    let mut stmt = conn.prepare(
        "SELECT session_id, message_key, block_body FROM injected_blocks
         WHERE block_body IS NOT NULL",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let (session, key, body): (String, String, Vec<u8>) =
            (row.get(0)?, row.get(1)?, row.get(2)?);
        count(
            format!("the block of {session}/{key}"),
            &body,
            &mut findings,
        );
    }
    let mut stmt = conn.prepare("SELECT id, data FROM body_part_data")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let (id, data): (i64, Vec<u8>) = (row.get(0)?, row.get(1)?);
        count(format!("part {id}"), &data, &mut findings);
    }
    let mut rebuilder = Rebuilder::new(conn);
    let mut stmt = conn.prepare("SELECT id, refs FROM body_parts")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let (id, refs): (i64, i64) = (row.get(0)?, row.get(1)?);
        match rebuilder.check_part(id) {
            Ok(()) => {}
            Err(StoreError::BadBody { detail, .. }) => findings.push(detail),
            Err(e) => return Err(e),
        }
        let found = counted.remove(&id).unwrap_or(0);
        if found != refs {
            findings.push(format!("part {id} counts {refs} references, {found} found"));
        }
    }
    let mut stmt = conn.prepare(
        "SELECT p.id FROM body_parts p LEFT JOIN body_part_data d ON d.id = p.id
         WHERE d.id IS NULL",
    )?;
    let empty = stmt.query_map([], |r| r.get::<_, i64>(0))?;
    for id in empty {
        findings.push(format!("part {} has no data", id?));
    }
    let mut missing: Vec<i64> = counted.into_keys().collect();
    missing.sort_unstable();
    findings.extend(
        missing
            .iter()
            .map(|id| format!("part {id} is referenced but missing")),
    );
    findings.truncate(MAX_FINDINGS);
    Ok(findings)
}
