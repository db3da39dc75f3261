//! Editing a unit's content or metadata, with optimistic concurrency.

use rusqlite::{Connection, TransactionBehavior};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::json;

use super::get::require;
use super::journal::Action;
use super::save::save_change;
use super::validate;
use crate::MemoryError;
use crate::unit::{Kind, MemoryUnit};

/// Fields to change; `None` leaves a field alone. For the nullable fields, `Some(None)`
/// clears the value (in JSON: `null` clears, an absent field leaves it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UnitPatch {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub kind: Option<Kind>,
    #[serde(default, deserialize_with = "present")]
    pub fact_key: Option<Option<String>>,
    #[serde(default)]
    pub importance: Option<f32>,
    #[serde(default)]
    pub confidence: Option<f32>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub entities: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    pub expires_ms: Option<Option<i64>>,
    #[serde(default)]
    pub pinned: Option<bool>,
}

/// A field that is present (even as `null`) is `Some`.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Applies `patch`. With `expected_version`, a unit changed meanwhile is a
/// [`MemoryError::Conflict`]. A patch that changes nothing writes nothing.
pub fn update(
    conn: &mut Connection,
    id: &str,
    patch: &UnitPatch,
    actor: &str,
    now_ms: i64,
    expected_version: Option<u64>,
) -> Result<MemoryUnit, MemoryError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current = require(&tx, id)?;
    if let Some(expected) = expected_version.filter(|v| *v != current.version) {
        return Err(MemoryError::Conflict {
            expected,
            found: current.version,
        });
    }
    let mut next = apply(&current, patch)?;
    let fields = changed_fields(&current, &next);
    if fields.is_empty() {
        return Ok(current);
    }
    next.version = current.version + 1;
    next.updated_ms = now_ms;
    let detail = json!({"fields": fields});
    save_change(&tx, &next, current.version, Action::Update, actor, detail)?;
    tx.commit()?;
    Ok(next)
}

fn apply(current: &MemoryUnit, patch: &UnitPatch) -> Result<MemoryUnit, MemoryError> {
    let mut next = current.clone();
    if let Some(content) = &patch.content {
        validate::content(content)?;
        next.content = content.trim().to_owned();
    }
    if let Some(summary) = &patch.summary {
        next.summary = summary.trim().to_owned();
    }
    if let Some(kind) = patch.kind {
        next.kind = kind;
    }
    if let Some(key) = &patch.fact_key {
        next.fact_key = validate::fact_key(key.as_deref());
    }
    if let Some(v) = patch.importance {
        next.importance = validate::unit_interval(v);
    }
    if let Some(v) = patch.confidence {
        next.confidence = validate::unit_interval(v);
    }
    if let Some(tags) = &patch.tags {
        next.tags = validate::tags(tags);
    }
    if let Some(entities) = &patch.entities {
        next.entities = validate::entities(entities);
    }
    if let Some(expires) = patch.expires_ms {
        validate::expiry(expires)?;
        next.expires_ms = expires;
    }
    if let Some(pinned) = patch.pinned {
        next.pinned = pinned;
    }
    Ok(next)
}

/// Names of the fields that differ, for the audit event (never their values: an event
/// must not keep content a purge removes).
fn changed_fields(a: &MemoryUnit, b: &MemoryUnit) -> Vec<&'static str> {
    [
        ("content", a.content != b.content),
        ("summary", a.summary != b.summary),
        ("kind", a.kind != b.kind),
        ("fact_key", a.fact_key != b.fact_key),
        ("importance", a.importance != b.importance),
        ("confidence", a.confidence != b.confidence),
        ("tags", a.tags != b.tags),
        ("entities", a.entities != b.entities),
        ("expires_ms", a.expires_ms != b.expires_ms),
        ("pinned", a.pinned != b.pinned),
    ]
    .into_iter()
    .filter_map(|(name, changed)| changed.then_some(name))
    .collect()
}
