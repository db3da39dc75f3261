//! The standing-rules profile: what the user set as a rule or a preference ("always",
//! "never", "from now on", a correction), shown on every main turn ahead of anything else.
//!
//! A standing rule applies to requests that share no word with it ("Log the meeting that
//! started at nine" needs "write every timestamp in ISO 8601"), so finding it by the
//! request's words cannot be enough. While the profile fits its own budget
//! (`policy.profile_tokens`) it is shown whole, in a fixed order, so the block's bytes stay
//! the same from turn to turn and the provider's prompt cache stays warm; only a profile
//! larger than that is cut down to the rules that fit the request (see `retrieve`).
//!
//! A person takes a unit out of the profile by changing its kind (to a fact, `semantic`):
//! it is then found by relevance like any memory. Archiving removes it.

use rusqlite::Connection;

use crate::MemoryError;
use crate::unit::{Kind, MemoryUnit};

/// Whether units of `kind` belong in the profile.
pub fn is_standing(kind: Kind) -> bool {
    matches!(kind, Kind::Preference | Kind::ProceduralObservation)
}

/// At most `limit` active, unexpired, unpinned standing units of `scope`: most important
/// first, then oldest first (a rule keeps its place as others are added), then by id.
/// Pinned units are shown in their own share. Read-only.
pub fn standing(
    conn: &Connection,
    scope: &str,
    limit: usize,
    now_ms: i64,
) -> Result<Vec<MemoryUnit>, MemoryError> {
    super::units_of(conn, STANDING_SQL, scope, limit, now_ms)
}

/// Read on every main turn, so it must stay on the `memory_units_standing` index (whose
/// `WHERE` it repeats word for word: SQLite only uses a partial index for a query whose
/// terms imply it). [`standing_plan`] lets a test check that.
const STANDING_SQL: &str = "SELECT id FROM memory_units
     WHERE scope = ?1 AND status = 'active' AND pinned = 0
       AND kind IN ('preference', 'procedural_observation')
       AND (expires_ms IS NULL OR expires_ms > ?2)
     ORDER BY importance DESC, created_ms, id LIMIT ?3";

/// SQLite's plan for [`standing`], one line per step.
pub fn standing_plan(conn: &Connection) -> Result<Vec<String>, MemoryError> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {STANDING_SQL}"))?;
    let rows = stmt.query_map(rusqlite::params!["default", 0_i64, 1_i64], |r| r.get(3))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
