//! How common each query term is, at a bounded cost.
//!
//! Document frequencies are counted by the MATCH itself, stopping at [`DF_CAP`]: exact,
//! and cheap, for the rare terms that matter; "common" for the rest. Counts are
//! remembered between searches (`df_cache`). (`fts5vocab` would
//! give exact counts, but reads a term's whole document list to do so, which costs as much
//! as the search.)

use rusqlite::Connection;
use rusqlite::config::DbConfig;

use super::df_cache::Counts;
use super::terms::{Term, TermKind, quote};

/// Counting stops here; a term this common is simply common. One past the ranked budget:
/// nothing finer is needed to tell a rare term from a common one.
pub const DF_CAP: u64 = super::candidates::POSTINGS_BUDGET + 1;
/// Most indexed trigrams a CJK piece expands to.
const MAX_EXPANSIONS: i64 = 32;
/// Sorts after every character, to turn a prefix into a range of terms.
const AFTER_ALL: char = '\u{10FFFF}';
const CREATE_CJK_VOCAB: &str = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_fts_cjk_vocab \
     USING fts5vocab(main, 'memory_fts_cjk', 'row')";

/// A term as the index sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermStat {
    /// Its MATCH expression piece; `None` when the index holds nothing for it.
    pub piece: Option<String>,
    /// Documents holding it, up to [`DF_CAP`] (all scopes and statuses).
    pub df: u64,
}

/// Statistics of every term, in order, and the number of units (for idf).
pub fn lookup(conn: &Connection, terms: &[Term]) -> rusqlite::Result<(Vec<TermStat>, u64)> {
    stable_plans(conn)?;
    let n: i64 = conn
        .prepare_cached("SELECT coalesce(max(rowid), 0) FROM memory_units")?
        .query_row([], |r| r.get(0))?;
    let counts = Counts::open(conn)?;
    let stats = terms
        .iter()
        .map(|t| stat(conn, &counts, t))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((stats, u64::try_from(n).unwrap_or(0)))
}

/// Turns on SQLite's query planner stability guarantee for this connection (a no-op once
/// on). Without it, SQLite re-plans a statement whenever a rebound parameter might change
/// the plan — and FTS5's own segment lookup (`… WHERE segid=? AND term<=?`) qualifies
/// whenever the segment id crosses 1, so nearly every term lookup was re-prepared, a
/// quarter of a long message's search time. Plans here never depend on parameter values.
pub(super) fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

fn stat(conn: &Connection, counts: &Counts, t: &Term) -> rusqlite::Result<TermStat> {
    let piece = match t.kind {
        TermKind::Word => t.fts_piece(),
        TermKind::Cjk => expand(conn, &t.text)?,
    };
    let Some(piece) = piece else {
        return Ok(TermStat { piece: None, df: 0 });
    };
    let table = match t.kind {
        TermKind::Word => "memory_fts",
        TermKind::Cjk => "memory_fts_cjk",
    };
    let df = match counts.get(table, &piece) {
        Some(df) => df,
        None => {
            let df = capped_df(conn, table, &piece)?;
            counts.put(table, &piece, df);
            df
        }
    };
    Ok(TermStat {
        piece: (df > 0).then_some(piece),
        df,
    })
}

fn capped_df(conn: &Connection, table: &str, piece: &str) -> rusqlite::Result<u64> {
    // The cap is written into the SQL, not bound: SQLite re-prepares a statement every time
    // a `LIMIT ?` parameter is rebound (its value may change the plan), which cost more than
    // the count itself.
    let sql = format!(
        "SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ?1 LIMIT {DF_CAP})"
    );
    let df: i64 = conn
        .prepare_cached(&sql)?
        .query_row([piece], |r| r.get(0))?;
    Ok(u64::try_from(df).unwrap_or(0))
}

/// A CJK bigram or lone character is searched as the indexed trigrams starting with it
/// (which misses only an occurrence at the very end of a column; scoring, which reads the
/// text, still counts it there). The trigram list comes from a connection-local TEMP
/// `fts5vocab` view: it stores nothing and never touches the database file, so read-only
/// connections can use it.
fn expand(conn: &Connection, run: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached(CREATE_CJK_VOCAB)?.execute([])?;
    let mut stmt = conn.prepare_cached(
        "SELECT term FROM temp.memory_fts_cjk_vocab WHERE term >= ?1 AND term < ?2 LIMIT ?3",
    )?;
    let terms = stmt
        .query_map(
            rusqlite::params![run, format!("{run}{AFTER_ALL}"), MAX_EXPANSIONS],
            |r| r.get::<_, String>(0),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((!terms.is_empty()).then(|| {
        let alts: Vec<String> = terms.iter().map(|t| quote(t)).collect();
        format!("({})", alts.join(" OR "))
    }))
}
