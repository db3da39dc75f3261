//! Listing units for people: filters, a sort, keyset pagination and a total count.

use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};
use serde::{Deserialize, Serialize};

use super::cursor;
use super::row::{COLUMNS, unit_from_row};
use crate::MemoryError;
use crate::unit::{Kind, MemoryUnit, Source, Status};

/// Page size when none is asked for, and the most one page may hold.
pub const DEFAULT_LIMIT: u32 = 50;
pub const MAX_LIMIT: u32 = 500;

/// Order of a listing, always descending (newest, most important first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SortBy {
    Created,
    #[default]
    Updated,
    /// Never-accessed units come last.
    Accessed,
    Importance,
}

impl SortBy {
    pub fn as_str(self) -> &'static str {
        match self {
            SortBy::Created => "created",
            SortBy::Updated => "updated",
            SortBy::Accessed => "accessed",
            SortBy::Importance => "importance",
        }
    }

    pub fn parse(s: &str) -> Option<SortBy> {
        [
            SortBy::Created,
            SortBy::Updated,
            SortBy::Accessed,
            SortBy::Importance,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    fn expr(self) -> &'static str {
        match self {
            SortBy::Created => "created_ms",
            SortBy::Updated => "updated_ms",
            SortBy::Accessed => "coalesce(last_accessed_ms, -9223372036854775808)",
            SortBy::Importance => "importance",
        }
    }

    pub(crate) fn real_key(self) -> bool {
        self == SortBy::Importance
    }
}

/// What to list. Every filter is optional; `statuses` empty means active only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ListQuery {
    /// None lists every scope.
    pub scope: Option<String>,
    pub kinds: Vec<Kind>,
    pub statuses: Vec<Status>,
    pub pinned: Option<bool>,
    /// Exact tag (compared lowercased and trimmed, as stored).
    pub tag: Option<String>,
    pub source: Option<Source>,
    /// Substring of content or summary. Case-insensitive for ASCII letters only (SQLite's
    /// `lower`); other scripts match case-sensitively.
    pub contains: Option<String>,
    pub sort: SortBy,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// 0 means [`DEFAULT_LIMIT`]; more than [`MAX_LIMIT`] is capped.
    pub limit: u32,
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    pub units: Vec<MemoryUnit>,
    /// Present when more units may follow.
    pub next_cursor: Option<String>,
    /// Units matching the filters, across all pages.
    pub total: u64,
}

/// One page of units matching `q`. Pages are keyed on (sort key, rowid), so units added
/// between two calls never shift or repeat what the next page returns.
pub fn list(conn: &Connection, q: &ListQuery) -> Result<Page, MemoryError> {
    let (filter, args) = filters(q);
    let total: i64 = conn
        .prepare_cached(&format!("SELECT count(*) FROM memory_units WHERE {filter}"))?
        .query_row(params_from_iter(args.iter()), |r| r.get(0))?;

    let (sql, page_args, limit) = page_query(q, filter, args)?;
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params_from_iter(page_args))?;
    let mut units = Vec::new();
    let mut last = None;
    let mut more = false;
    while let Some(row) = rows.next()? {
        if units.len() == limit as usize {
            more = true;
            break;
        }
        units.push(unit_from_row(row)?);
        last = Some((row.get::<_, Value>(23)?, row.get::<_, i64>(22)?));
    }
    let next_cursor = match (more, last) {
        (true, Some((key, rowid))) => Some(cursor::encode(q.sort, &key, rowid)),
        _ => None,
    };
    Ok(Page {
        units,
        next_cursor,
        total: u64::try_from(total).unwrap_or(0),
    })
}

/// SQLite's plan for the page query of `q`, one line per step, so tests and diagnostics can
/// check that a listing uses an index instead of timing it.
pub fn list_plan(conn: &Connection, q: &ListQuery) -> Result<Vec<String>, MemoryError> {
    let (filter, args) = filters(q);
    let (sql, args, _) = page_query(q, filter, args)?;
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
    let rows = stmt.query_map(params_from_iter(args), |r| r.get(3))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The page query: filters, then strictly after the cursor, one row more than the limit
/// (that extra row tells whether another page follows).
fn page_query(
    q: &ListQuery,
    filter: String,
    mut args: Vec<Value>,
) -> Result<(String, Vec<Value>, u32), MemoryError> {
    let key = q.sort.expr();
    let mut after = String::new();
    if let Some(text) = &q.cursor {
        let c = cursor::decode(q.sort, text)?;
        after = format!(" AND ({key}, rowid) < (?, ?)");
        args.push(c.key);
        args.push(Value::Integer(c.rowid));
    }
    let limit = match q.limit {
        0 => DEFAULT_LIMIT,
        n => n.min(MAX_LIMIT),
    };
    args.push(Value::Integer(i64::from(limit) + 1));
    let sql = format!(
        "SELECT {COLUMNS}, rowid, {key} FROM memory_units WHERE {filter}{after}
         ORDER BY {key} DESC, rowid DESC LIMIT ?"
    );
    Ok((sql, args, limit))
}

/// The WHERE clause (without cursor) and its arguments.
fn filters(q: &ListQuery) -> (String, Vec<Value>) {
    let mut clauses: Vec<String> = Vec::new();
    let mut args: Vec<Value> = Vec::new();
    let text = |s: &str| Value::Text(s.to_owned());
    if let Some(scope) = &q.scope {
        clauses.push("scope = ?".into());
        args.push(text(scope));
    }
    let statuses: &[Status] = if q.statuses.is_empty() {
        &[Status::Active]
    } else {
        &q.statuses
    };
    clauses.push(format!("status IN ({})", marks(statuses.len())));
    args.extend(statuses.iter().map(|s| text(s.as_str())));
    if !q.kinds.is_empty() {
        clauses.push(format!("kind IN ({})", marks(q.kinds.len())));
        args.extend(q.kinds.iter().map(|k| text(k.as_str())));
    }
    if let Some(pinned) = q.pinned {
        clauses.push("pinned = ?".into());
        args.push(Value::Integer(i64::from(pinned)));
    }
    if let Some(tag) = &q.tag {
        clauses.push(
            "EXISTS (SELECT 1 FROM json_each(memory_units.tags) WHERE json_each.value = ?)".into(),
        );
        args.push(text(&tag.trim().to_lowercase()));
    }
    if let Some(source) = q.source {
        clauses.push("source = ?".into());
        args.push(text(source.as_str()));
    }
    if let Some(needle) = q.contains.as_deref().filter(|n| !n.is_empty()) {
        clauses.push("(instr(lower(content), ?) > 0 OR instr(lower(summary), ?) > 0)".into());
        // ASCII-only on both sides, so an exact-case match always works.
        let needle = needle.to_ascii_lowercase();
        args.push(text(&needle));
        args.push(text(&needle));
    }
    (clauses.join(" AND "), args)
}

fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}
