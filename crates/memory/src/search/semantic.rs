//! Candidates found by meaning: units an embedding index (kept by the caller, since vectors
//! need a model) found close to the query, read with what scoring needs and filtered like
//! full-text candidates (the index may predate an edit, a forget or an expiry).

use std::collections::HashMap;

use rusqlite::Connection;
use rusqlite::types::Value;

use super::SearchQuery;
use super::candidates::{ROW_COLUMNS, Row, filters, read_row};

/// Adds the units of `similar` (id, cosine) to `out`, unless already there.
pub fn gather(
    conn: &Connection,
    q: &SearchQuery,
    similar: &[(String, f32)],
    now_ms: i64,
    out: &mut HashMap<String, Row>,
) -> rusqlite::Result<()> {
    let (cond, filter_params) = filters(q, now_ms, 2);
    let sql = format!("SELECT {ROW_COLUMNS} FROM memory_units m WHERE m.id = ?1{cond}");
    let mut stmt = conn.prepare_cached(&sql)?;
    for (id, _) in similar {
        if out.contains_key(id) {
            continue;
        }
        let mut params = vec![Value::Text(id.clone())];
        params.extend(filter_params.iter().cloned());
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        if let Some(r) = rows.next()? {
            let row = read_row(r)?;
            out.insert(row.id.clone(), row);
        }
    }
    Ok(())
}
