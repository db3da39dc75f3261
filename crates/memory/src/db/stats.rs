//! Counts for dashboards and the compatibility `stats` route.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::row::unsigned;
use crate::MemoryError;

/// Counts over one scope or all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Every unit, whatever its status.
    pub total: u64,
    pub active: u64,
    pub superseded: u64,
    pub archived: u64,
    /// Active pinned units (the ones retrieval injects first).
    pub pinned: u64,
    /// Active units per kind name.
    pub by_kind: BTreeMap<String, u64>,
    /// Every unit per scope, by scope name (only the asked scope when one is given).
    pub scopes: Vec<(String, u64)>,
}

pub fn stats(conn: &Connection, scope: Option<&str>) -> Result<Stats, MemoryError> {
    // Two spellings rather than `?1 IS NULL OR scope = ?1`, which would defeat the index.
    let filter = if scope.is_some() {
        "scope = ?1"
    } else {
        "?1 IS NULL"
    };
    let (total, active, superseded, archived, pinned) = conn
        .prepare_cached(&format!(
            "SELECT count(*),
                 coalesce(sum(status = 'active'), 0),
                 coalesce(sum(status = 'superseded'), 0),
                 coalesce(sum(status = 'archived'), 0),
                 coalesce(sum(status = 'active' AND pinned), 0)
             FROM memory_units WHERE {filter}"
        ))?
        .query_row([scope], |r| {
            Ok((
                unsigned(0, r.get(0)?)?,
                unsigned(1, r.get(1)?)?,
                unsigned(2, r.get(2)?)?,
                unsigned(3, r.get(3)?)?,
                unsigned(4, r.get(4)?)?,
            ))
        })?;
    let by_kind = counts(
        conn,
        &format!(
            "SELECT kind, count(*) FROM memory_units WHERE {filter} AND status = 'active'
             GROUP BY kind"
        ),
        scope,
    )?
    .into_iter()
    .collect();
    let scopes = counts(
        conn,
        &format!(
            "SELECT scope, count(*) FROM memory_units WHERE {filter} GROUP BY scope ORDER BY scope"
        ),
        scope,
    )?;
    Ok(Stats {
        total,
        active,
        superseded,
        archived,
        pinned,
        by_kind,
        scopes,
    })
}

/// Active units of `scope`, counted on the `(scope, status, kind)` index alone. The adaptive
/// policy asks every few dozen turns, and [`stats`] reads every row of the scope.
pub fn active_count(conn: &Connection, scope: &str) -> Result<u64, MemoryError> {
    let n = conn
        .prepare_cached(
            "SELECT count(*) FROM memory_units INDEXED BY memory_units_scope_status_kind
             WHERE scope = ?1 AND status = 'active'",
        )?
        .query_row([scope], |r| unsigned(0, r.get(0)?))?;
    Ok(n)
}

fn counts(
    conn: &Connection,
    sql: &str,
    scope: Option<&str>,
) -> Result<Vec<(String, u64)>, MemoryError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map([scope], |r| Ok((r.get(0)?, unsigned(1, r.get(1)?)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
