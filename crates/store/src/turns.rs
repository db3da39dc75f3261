//! Turn rows: batch insertion (one transaction) and reads.

use rusqlite::{Row, Transaction, TransactionBehavior, params};
use serde::Serialize;

use crate::body_parts::{Kind, Rebuilder, store_body};
use crate::error::StoreError;
use crate::open::Store;

/// Which end of a range of turns a bounded read takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Oldest,
    Newest,
}

/// Turns with `after < turn_index <= through`; `None` leaves that side open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnRange {
    pub after: Option<u64>,
    pub through: Option<u64>,
}

/// Row id of a stored turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TurnId(pub i64);

/// A finished turn ready to be stored. `turn_index` is assigned by the store.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewTurn {
    pub session_id: String,
    /// `main` or `side`; anything else is rejected by the schema.
    pub turn_type: String,
    pub scope: String,
    pub client_protocol: String,
    pub upstream_protocol: String,
    pub upstream: String,
    pub model: String,
    pub request_json: String,
    pub reply_json: Option<String>,
    pub status: u16,
    pub error: Option<String>,
    /// The whole prompt, cache reads and writes included (see `migrations_usage`).
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// The part of `input_tokens` read from the provider's prompt cache.
    pub cache_read_tokens: Option<u64>,
    /// The part of `input_tokens` written to the provider's prompt cache.
    pub cache_write_tokens: Option<u64>,
    pub overhead_ms: f64,
    pub ttft_ms: Option<f64>,
    pub total_ms: f64,
    pub created_at_ms: i64,
    /// The skill library's generation when the turn was served.
    pub skill_generation: u64,
    /// Names of the skills injected into this turn's request; stored as NULL when empty.
    pub injected_skills: Vec<String>,
    /// Ids of the memories in this turn's block; stored as NULL when empty.
    pub injected_memories: Vec<String>,
    /// Estimated tokens of every MetaClaw block in the forwarded request.
    pub injected_tokens: Option<u64>,
    /// Estimated tokens of the block carrying `injected_skills` and `injected_memories`.
    pub block_tokens: Option<u64>,
    /// The session was held out from MetaClaw's block (`learning.holdout`).
    pub held_out: bool,
}

/// A stored turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnRow {
    pub id: TurnId,
    pub session_id: String,
    pub turn_index: u64,
    pub turn_type: String,
    pub scope: String,
    pub client_protocol: String,
    pub upstream_protocol: String,
    pub upstream: String,
    pub model: String,
    /// Byte for byte what the upstream received; [`crate::DROPPED_REQUEST_JSON`] once
    /// retention dropped it.
    pub request_json: String,
    /// `None` without a reply, or once retention dropped it.
    pub reply_json: Option<String>,
    pub status: u16,
    pub error: Option<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub overhead_ms: f64,
    pub ttft_ms: Option<f64>,
    pub total_ms: f64,
    pub skill_generation: u64,
    pub created_at_ms: i64,
    /// Empty for turns stored before schema v2 or given no skills.
    pub injected_skills: Vec<String>,
}

const ROW_COLUMNS: &str = "id, session_id, turn_index, turn_type, scope, client_protocol,
    upstream_protocol, upstream, model, request_json, reply_json, status, error, input_tokens,
    output_tokens, overhead_ms, ttft_ms, total_ms, skill_generation, created_at_ms,
    injected_skills, request_body, reply_body";

impl Store {
    /// Stores a batch of turns atomically: either all land or none does. Creates missing
    /// session rows, numbers each session's turns after its highest stored index (so
    /// numbering survives restarts) and updates the session's counters.
    pub fn insert_turns(&mut self, turns: &[NewTurn]) -> Result<Vec<TurnId>, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let ids = turns
            .iter()
            .map(|turn| insert_one(&tx, turn))
            .collect::<Result<Vec<_>, _>>()?;
        tx.commit()?;
        Ok(ids)
    }

    /// The newest `limit` turns, newest first.
    pub fn recent_turns(&self, limit: usize) -> Result<Vec<TurnRow>, StoreError> {
        let sql = format!("SELECT {ROW_COLUMNS} FROM turns ORDER BY id DESC LIMIT ?1");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([limit], turn_row)?;
        self.with_bodies(rows.collect::<Result<_, _>>()?)
    }

    /// All turns of one session, in order.
    /// A session's turns after `after` (its turn index), oldest first; all of them for `None`.
    /// Learning jobs read only what they have not learned from yet, so a long session does
    /// not load its whole history on every trigger.
    /// Turns a learning job may read: `session`'s successful main turns (2xx, no error)
    /// with `after < turn_index <= through`, at most `limit` of them, taken from the `from`
    /// end of that range and returned oldest first. Bounded so a job that fell behind never
    /// loads its whole backlog at once.
    pub fn learnable_turns(
        &self,
        session_id: &str,
        range: TurnRange,
        limit: usize,
        from: End,
    ) -> Result<Vec<TurnRow>, StoreError> {
        let order = match from {
            End::Oldest => "ASC",
            End::Newest => "DESC",
        };
        let sql = format!(
            "SELECT {ROW_COLUMNS} FROM turns WHERE session_id = ?1 AND turn_index > ?2
               AND turn_index <= ?3 AND turn_type = 'main' AND status BETWEEN 200 AND 299
               AND error IS NULL
             ORDER BY turn_index {order} LIMIT ?4"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let index =
            |i: Option<u64>, none: i64| i.map_or(none, |i| i64::try_from(i).unwrap_or(i64::MAX));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(
            params![
                session_id,
                index(range.after, -1),
                index(range.through, i64::MAX),
                limit
            ],
            turn_row,
        )?;
        let mut rows: Vec<_> = rows.collect::<Result<_, _>>()?;
        if from == End::Newest {
            rows.reverse();
        }
        self.with_bodies(rows)
    }

    /// How many turns [`Store::learnable_turns`] would find in `range` without a limit.
    pub fn count_learnable_turns(
        &self,
        session_id: &str,
        range: TurnRange,
    ) -> Result<usize, StoreError> {
        let index =
            |i: Option<u64>, none: i64| i.map_or(none, |i| i64::try_from(i).unwrap_or(i64::MAX));
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT COUNT(*) FROM turns WHERE session_id = ?1 AND turn_index > ?2
                   AND turn_index <= ?3 AND turn_type = 'main' AND status BETWEEN 200 AND 299
                   AND error IS NULL",
            )?
            .query_row(
                params![
                    session_id,
                    index(range.after, -1),
                    index(range.through, i64::MAX)
                ],
                |r| r.get(0),
            )?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    pub fn session_turns(&self, session_id: &str) -> Result<Vec<TurnRow>, StoreError> {
        let sql =
            format!("SELECT {ROW_COLUMNS} FROM turns WHERE session_id = ?1 ORDER BY turn_index");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([session_id], turn_row)?;
        self.with_bodies(rows.collect::<Result<_, _>>()?)
    }

    /// The rows with their bodies rebuilt (see [`turn_row`]).
    fn with_bodies(&self, rows: Vec<Stored>) -> Result<Vec<TurnRow>, StoreError> {
        let mut rebuilder = Rebuilder::new(&self.conn);
        rows.into_iter()
            .map(|(mut row, request, reply)| {
                let request_json = std::mem::take(&mut row.request_json);
                row.request_json = rebuilder.request(row.id, request_json, request)?;
                row.reply_json = rebuilder.reply(row.id, row.reply_json.take(), reply)?;
                Ok(row)
            })
            .collect()
    }
}

fn insert_one(tx: &Transaction<'_>, t: &NewTurn) -> Result<TurnId, StoreError> {
    let request_body = store_body(tx, &t.request_json, Kind::Request)?;
    let reply_body = match &t.reply_json {
        Some(reply) => Some(store_body(tx, reply, Kind::Reply)?),
        None => None,
    };
    tx.prepare_cached(
        "INSERT OR IGNORE INTO sessions (id, scope, started_at_ms, last_turn_at_ms)
         VALUES (?1, ?2, ?3, ?3)",
    )?
    .execute(params![t.session_id, t.scope, t.created_at_ms])?;
    tx.prepare_cached(
        "INSERT INTO turns (session_id, turn_index, turn_type, scope, client_protocol,
             upstream_protocol, upstream, model, request_json, reply_json, status, error,
             input_tokens, output_tokens, overhead_ms, ttft_ms, total_ms, created_at_ms,
             injected_skills, skill_generation, cache_read_tokens, cache_write_tokens,
             injected_memories, injected_tokens, block_tokens, held_out, request_body,
             reply_body)
         VALUES (?1,
             (SELECT COALESCE(MAX(turn_index) + 1, 0) FROM turns WHERE session_id = ?1),
             ?2, ?3, ?4, ?5, ?6, ?7, '', NULL, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
             ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
    )?
    .execute(params![
        t.session_id,
        t.turn_type,
        t.scope,
        t.client_protocol,
        t.upstream_protocol,
        t.upstream,
        t.model,
        t.status,
        t.error,
        t.input_tokens,
        t.output_tokens,
        t.overhead_ms,
        t.ttft_ms,
        t.total_ms,
        t.created_at_ms,
        skills_json(&t.injected_skills),
        i64::try_from(t.skill_generation).unwrap_or(i64::MAX),
        t.cache_read_tokens,
        t.cache_write_tokens,
        skills_json(&t.injected_memories),
        t.injected_tokens,
        t.block_tokens,
        t.held_out,
        request_body,
        reply_body,
    ])?;
    let id = TurnId(tx.last_insert_rowid());
    tx.prepare_cached(
        "UPDATE sessions SET
             main_turns = main_turns + (?2 = 'main'),
             side_turns = side_turns + (?2 = 'side'),
             last_turn_at_ms = MAX(last_turn_at_ms, ?3)
         WHERE id = ?1",
    )?
    .execute(params![t.session_id, t.turn_type, t.created_at_ms])?;
    Ok(id)
}

/// A row as stored, with its `request_body` and `reply_body`: until [`Rebuilder`] rebuilds
/// them, `request_json` and `reply_json` hold the columns' values (empty and NULL once the
/// turn is in the v9 layout).
type Stored = (TurnRow, Option<Vec<u8>>, Option<Vec<u8>>);

fn turn_row(row: &Row<'_>) -> rusqlite::Result<Stored> {
    let turn = TurnRow {
        id: TurnId(row.get(0)?),
        session_id: row.get(1)?,
        turn_index: row.get(2)?,
        turn_type: row.get(3)?,
        scope: row.get(4)?,
        client_protocol: row.get(5)?,
        upstream_protocol: row.get(6)?,
        upstream: row.get(7)?,
        model: row.get(8)?,
        request_json: row.get(9)?,
        reply_json: row.get(10)?,
        status: row.get(11)?,
        error: row.get(12)?,
        input_tokens: row.get(13)?,
        output_tokens: row.get(14)?,
        overhead_ms: row.get(15)?,
        ttft_ms: row.get(16)?,
        total_ms: row.get(17)?,
        skill_generation: row.get(18)?,
        created_at_ms: row.get(19)?,
        injected_skills: skills_from_json(row.get(20)?),
    };
    Ok((turn, row.get(21)?, row.get(22)?))
}

/// A list of names or ids as a JSON array; NULL when empty.
pub(crate) fn skills_json(skills: &[String]) -> Option<String> {
    if skills.is_empty() {
        None
    } else {
        serde_json::to_string(skills).ok()
    }
}

/// NULL and unreadable values both read as "no skills": this column is informational, and
/// one bad cell must not make the whole turn history unreadable.
pub(crate) fn skills_from_json(raw: Option<String>) -> Vec<String> {
    raw.and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}
