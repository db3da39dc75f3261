//! Full-text candidates within a bounded amount of work.
//!
//! A 100,000-unit scope makes ranking every document that holds any query word too slow
//! for the request path: bm25 and the rowid join cost microseconds per matching row, and
//! an FTS5 AND reads the whole document list of every term in it, so an AND of two common
//! words costs as much as their longest list, found or not. So, per index, with each
//! term's document frequency:
//! - the rarest terms, as long as their summed frequencies stay within
//!   [`POSTINGS_BUDGET`], are ORed and ranked by bm25;
//! - each remaining (common) term, rarest first and at most [`MAX_COMMON_TERMS`] of them,
//!   brings the newest `pool` units holding it, while fewer than `pool` candidates are
//!   found. Reading a list newest first stops after `pool` rows, so the work is bounded
//!   whatever the library's size.
//!
//! Which candidates win is decided afterwards, by the idf-weighted share of query terms
//! each holds (`score`), so the ranking here only has to find them: a unit holding several
//! common words is found through any of them. What this gives up, knowingly: among units
//! that share only common words with the query, only the newest are considered.
//!
//! Rows are read with what scoring needs, so only the final hits are loaded in full.
//! Scope, status and expiry are filtered on the base table through the rowid join; the FTS
//! table drives each query (`CROSS JOIN`).

use std::collections::HashMap;

use rusqlite::Connection;
use rusqlite::types::Value;

use super::SearchQuery;
use super::stats::TermStat;
use super::terms::{Term, TermKind};
use crate::unit::Kind;

/// Most postings (documents per term, summed) ranked by bm25 in one query.
pub const POSTINGS_BUDGET: u64 = 300;
/// Most common terms read newest first.
pub const MAX_COMMON_TERMS: usize = 3;

/// What scoring needs of a candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub kind: Kind,
    /// Content, summary, tags and entities (JSON as stored), for term matching.
    pub text: String,
    pub importance: f32,
    pub confidence: f32,
    pub pinned: bool,
    pub updated_ms: i64,
    pub last_accessed_ms: Option<i64>,
}

pub(super) const ROW_COLUMNS: &str = "m.id, m.kind, m.content || char(10) || m.summary || char(10) || \
     m.tags || char(10) || m.entities, m.importance, m.confidence, m.pinned, m.updated_ms, \
     m.last_accessed_ms";

pub(super) fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let kind: String = r.get(1)?;
    Ok(Row {
        id: r.get(0)?,
        kind: Kind::parse(&kind).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                1,
                rusqlite::types::Type::Text,
                format!("unknown kind {kind:?}").into(),
            )
        })?,
        text: r.get(2)?,
        importance: r.get::<_, f64>(3)? as f32,
        confidence: r.get::<_, f64>(4)? as f32,
        pinned: r.get(5)?,
        updated_ms: r.get(6)?,
        last_accessed_ms: r.get(7)?,
    })
}

/// Candidates of both indexes, by id.
pub fn gather(
    conn: &Connection,
    q: &SearchQuery,
    terms: &[Term],
    stats: &[TermStat],
    pool: usize,
    now_ms: i64,
) -> rusqlite::Result<HashMap<String, Row>> {
    super::stats::stable_plans(conn)?;
    let mut out = HashMap::new();
    for (table, cjk) in [("memory_fts", false), ("memory_fts_cjk", true)] {
        let mut items: Vec<(&str, u64)> = terms
            .iter()
            .zip(stats)
            .filter(|(t, _)| (t.kind != TermKind::Word) == cjk)
            .filter_map(|(_, s)| s.piece.as_deref().map(|p| (p, s.df)))
            .collect();
        items.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
        plan(conn, table, &items, q, pool, now_ms, &mut out)?;
    }
    Ok(out)
}

fn plan(
    conn: &Connection,
    table: &str,
    items: &[(&str, u64)],
    q: &SearchQuery,
    pool: usize,
    now_ms: i64,
    out: &mut HashMap<String, Row>,
) -> rusqlite::Result<()> {
    let mut sum = 0;
    let rare = items
        .iter()
        .take_while(|(_, df)| {
            sum += df;
            sum <= POSTINGS_BUDGET
        })
        .count();
    let (rare_items, common) = items.split_at(rare);
    if !rare_items.is_empty() {
        let pieces: Vec<&str> = rare_items.iter().map(|(p, _)| *p).collect();
        fetch(
            conn,
            table,
            &pieces.join(" OR "),
            true,
            q,
            pool,
            now_ms,
            out,
        )?;
    }
    for (piece, _) in common.iter().take(MAX_COMMON_TERMS) {
        if out.len() >= pool {
            break;
        }
        fetch(conn, table, piece, false, q, pool, now_ms, out)?;
    }
    Ok(())
}

/// `AND …` conditions on `m` (the unit row) and their parameters, numbered from `first`.
pub(super) fn filters(q: &SearchQuery, now_ms: i64, first: usize) -> (String, Vec<Value>) {
    let mut sql = format!(" AND m.scope = ?{first}");
    let mut params = vec![Value::Text(q.scope.clone())];
    if !q.include_inactive {
        sql.push_str(&format!(
            " AND m.status = 'active' AND (m.expires_ms IS NULL OR m.expires_ms > ?{})",
            first + 1
        ));
        params.push(Value::Integer(now_ms));
    }
    if !q.kinds.is_empty() {
        // Bound rather than written in, so every one-kind search (reconciliation runs one per
        // candidate) shares one cached statement instead of one per kind.
        let at = first + params.len();
        let slots: Vec<String> = (at..at + q.kinds.len()).map(|i| format!("?{i}")).collect();
        sql.push_str(&format!(" AND m.kind IN ({})", slots.join(", ")));
        params.extend(q.kinds.iter().map(|k| Value::Text(k.as_str().to_owned())));
    }
    (sql, params)
}

/// Runs one MATCH, best bm25 first (`ranked`) or newest first, up to `pool` rows.
#[allow(clippy::too_many_arguments)]
fn fetch(
    conn: &Connection,
    table: &str,
    expr: &str,
    ranked: bool,
    q: &SearchQuery,
    pool: usize,
    now_ms: i64,
    out: &mut HashMap<String, Row>,
) -> rusqlite::Result<()> {
    let (cond, filter_params) = filters(q, now_ms, 3);
    let order = if ranked {
        format!("bm25({table}), m.id")
    } else {
        format!("{table}.rowid DESC")
    };
    // The inner query picks rowids; columns are read only for the rows kept.
    let sql = format!(
        "SELECT {ROW_COLUMNS} FROM (
             SELECT m.rowid AS picked
             FROM {table} CROSS JOIN memory_units m ON m.rowid = {table}.rowid
             WHERE {table} MATCH ?1{cond}
             ORDER BY {order} LIMIT ?2
         ) CROSS JOIN memory_units m ON m.rowid = picked"
    );
    // A bound `LIMIT ?` would make SQLite re-prepare the statement on every run, but not
    // under the planner stability guarantee `gather` turns on.
    let mut params = vec![
        Value::Text(expr.to_owned()),
        Value::Integer(i64::try_from(pool).unwrap_or(i64::MAX)),
    ];
    params.extend(filter_params);
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(params), read_row)?;
    for row in rows {
        let row = row?;
        out.entry(row.id.clone()).or_insert(row);
    }
    Ok(())
}
