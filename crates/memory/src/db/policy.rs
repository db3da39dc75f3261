//! The retrieval policy per scope and every change made to it (`memory_policy`,
//! `memory_policy_history`).

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use crate::MemoryError;
use crate::policy::RetrievalPolicy;

/// One change to a scope's policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyRevision {
    pub at_ms: i64,
    /// `None` for the first change (the policy was the configured one).
    pub old: Option<serde_json::Value>,
    pub new: serde_json::Value,
    pub reason: String,
}

/// The stored policy of `scope`, `None` when it never changed. A stored policy that no
/// longer parses or validates (a hand edit, a newer version's field) is an error, so the
/// caller can say so and fall back to the configured one.
pub fn load_policy(conn: &Connection, scope: &str) -> Result<Option<RetrievalPolicy>, MemoryError> {
    let json: Option<String> = conn
        .prepare_cached("SELECT policy_json FROM memory_policy WHERE scope = ?1")?
        .query_row([scope], |r| r.get(0))
        .optional()?;
    let Some(json) = json else {
        return Ok(None);
    };
    let policy: RetrievalPolicy = serde_json::from_str(&json)
        .map_err(|e| MemoryError::Invalid(format!("stored policy of scope {scope:?}: {e}")))?;
    policy
        .validate()
        .map_err(|e| MemoryError::Invalid(format!("stored policy of scope {scope:?}: {e}")))?;
    Ok(Some(policy))
}

/// Stores `policy` for `scope` and records the change with its reason, in one transaction.
/// An invalid policy is refused; saving the policy already stored records nothing.
pub fn save_policy(
    conn: &mut Connection,
    scope: &str,
    policy: &RetrievalPolicy,
    reason: &str,
    now_ms: i64,
) -> Result<bool, MemoryError> {
    policy
        .validate()
        .map_err(|e| MemoryError::Invalid(e.to_string()))?;
    let new = serde_json::to_string(policy).map_err(|e| MemoryError::Invalid(e.to_string()))?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let old: Option<String> = tx
        .prepare_cached("SELECT policy_json FROM memory_policy WHERE scope = ?1")?
        .query_row([scope], |r| r.get(0))
        .optional()?;
    if old.as_deref() == Some(new.as_str()) {
        return Ok(false);
    }
    tx.prepare_cached(
        "INSERT INTO memory_policy (scope, policy_json, updated_ms) VALUES (?1, ?2, ?3)
         ON CONFLICT(scope) DO UPDATE SET policy_json = excluded.policy_json,
             updated_ms = excluded.updated_ms",
    )?
    .execute(params![scope, new, now_ms])?;
    tx.prepare_cached(
        "INSERT INTO memory_policy_history (scope, at_ms, old_json, new_json, reason)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![scope, now_ms, old, new, reason])?;
    tx.commit()?;
    Ok(true)
}

/// The latest `limit` changes of `scope`'s policy, newest first.
pub fn policy_history(
    conn: &Connection,
    scope: &str,
    limit: usize,
) -> Result<Vec<PolicyRevision>, MemoryError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut stmt = conn.prepare_cached(
        "SELECT at_ms, old_json, new_json, reason FROM memory_policy_history
         WHERE scope = ?1 ORDER BY at_ms DESC, id DESC LIMIT ?2",
    )?;
    let rows = stmt
        .query_map(params![scope, limit], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // A damaged JSON cell is shown as its text rather than hiding the revision.
    let value = |s: &str| {
        serde_json::from_str(s).unwrap_or_else(|_| serde_json::Value::String(s.to_owned()))
    };
    Ok(rows
        .into_iter()
        .map(|(at_ms, old, new, reason)| PolicyRevision {
            at_ms,
            old: old.as_deref().map(value),
            new: value(&new),
            reason,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaclaw_store::Store;

    #[test]
    fn saves_with_history_skips_no_ops_and_refuses_invalid_or_damaged_policies() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let conn = store.connection_mut();
        assert_eq!(load_policy(conn, "s").unwrap(), None);
        let mut p = RetrievalPolicy {
            max_units: 7,
            ..RetrievalPolicy::default()
        };
        assert!(save_policy(conn, "s", &p, "first", 10).unwrap());
        assert!(!save_policy(conn, "s", &p, "same again", 11).unwrap());
        p.max_units = 8;
        assert!(save_policy(conn, "s", &p, "second", 12).unwrap());
        assert_eq!(load_policy(conn, "s").unwrap().unwrap().max_units, 8);
        assert_eq!(load_policy(conn, "other").unwrap(), None);
        let h = policy_history(conn, "s", 10).unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].reason, "second");
        assert_eq!(h[0].old.as_ref().unwrap()["max_units"], 7);
        assert_eq!(h[1].old, None);

        p.max_units = 0;
        assert!(save_policy(conn, "s", &p, "bad", 13).is_err());
        assert_eq!(load_policy(conn, "s").unwrap().unwrap().max_units, 8);

        conn.execute(
            "UPDATE memory_policy SET policy_json = '{\"max_units\": 0}' WHERE scope = 's'",
            [],
        )
        .unwrap();
        let err = load_policy(conn, "s").unwrap_err().to_string();
        assert!(err.contains("max_units"), "{err}");
    }
}
