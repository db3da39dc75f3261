//! Consolidation, planned without touching the database: duplicates merged into the unit
//! that stays, stale working summaries superseded by the newest, expired units archived, and
//! importance decayed for units nobody has used in a long time. Pinned units are never
//! touched. The caller applies the plan through `db` (every change audited).

use std::collections::HashMap;

use rusqlite::Connection;
use serde::Serialize;

use crate::MemoryError;
use crate::db::{self, UnitPatch};
use crate::reconcile::{similarity, threshold_for};
use crate::text::normalized;
use crate::unit::{Kind, MemoryUnit, Status};

const DAY_MS: i64 = 24 * 3600 * 1000;

/// How consolidation treats time.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsolidationPolicy {
    /// Importance halves every this many days without use.
    pub decay_half_life_days: f32,
    /// Units used (or edited) more recently than this are not decayed.
    pub decay_after_days: f32,
    /// Decay never goes below this: an old fact may still be asked about.
    pub min_importance: f32,
    /// Changes smaller than this are not written (no history noise).
    pub min_change: f32,
}

impl Default for ConsolidationPolicy {
    fn default() -> Self {
        Self {
            decay_half_life_days: 90.0,
            decay_after_days: 30.0,
            min_importance: 0.1,
            min_change: 0.05,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Step {
    /// `old` says nothing `new` does not: mark it superseded by `new`.
    Supersede {
        old: String,
        new: String,
        reason: String,
    },
    /// Past its `expires_ms`.
    Archive { id: String, reason: String },
    /// Lower importance after long disuse.
    Decay { id: String, importance: f32 },
}

/// The steps for one scope's active units (other statuses are ignored).
pub fn plan(units: &[MemoryUnit], now_ms: i64, policy: &ConsolidationPolicy) -> Vec<Step> {
    let active: Vec<&MemoryUnit> = units
        .iter()
        .filter(|u| u.status == Status::Active)
        .collect();
    let mut steps = Vec::new();
    let mut gone: Vec<&str> = Vec::new();

    for u in active.iter().filter(|u| !u.pinned) {
        if u.expires_ms.is_some_and(|t| t <= now_ms) {
            steps.push(Step::Archive {
                id: u.id.clone(),
                reason: "expired".into(),
            });
            gone.push(&u.id);
        }
    }

    // Only the newest working summary of a scope describes "the latest session".
    let mut summaries: Vec<&&MemoryUnit> = active
        .iter()
        .filter(|u| u.kind == Kind::WorkingSummary && !u.pinned && !gone.contains(&u.id.as_str()))
        .collect();
    summaries.sort_by_key(|u| (u.created_ms, u.id.clone()));
    if let Some((newest, older)) = summaries.split_last() {
        for old in older {
            steps.push(Step::Supersede {
                old: old.id.clone(),
                new: newest.id.clone(),
                reason: "an older session summary".into(),
            });
            gone.push(&old.id);
        }
    }

    // Duplicates: the unit that stays is the pinned one, else the more important, else the
    // newer; compared within a kind.
    let mut by_kind: HashMap<Kind, Vec<&MemoryUnit>> = HashMap::new();
    for u in active.iter().filter(|u| u.kind != Kind::WorkingSummary) {
        by_kind.entry(u.kind).or_default().push(u);
    }
    let mut kinds: Vec<_> = by_kind.into_iter().collect();
    kinds.sort_by_key(|(k, _)| *k);
    for (_, mut group) in kinds {
        group.sort_by(|a, b| keep_order(b, a));
        for (i, keeper) in group.iter().enumerate() {
            if gone.contains(&keeper.id.as_str()) {
                continue;
            }
            for other in &group[i + 1..] {
                if other.pinned || gone.contains(&other.id.as_str()) {
                    continue;
                }
                if let Some(reason) = duplicate(keeper, other) {
                    steps.push(Step::Supersede {
                        old: other.id.clone(),
                        new: keeper.id.clone(),
                        reason,
                    });
                    gone.push(&other.id);
                }
            }
        }
    }

    for u in active
        .iter()
        .filter(|u| !u.pinned && !gone.contains(&u.id.as_str()))
    {
        if let Some(importance) = decayed(u, now_ms, policy) {
            steps.push(Step::Decay {
                id: u.id.clone(),
                importance,
            });
        }
    }
    steps
}

/// Units of a scope consolidation looks at, at most; the newest are the ones that matter.
const MAX_UNITS: u32 = 5000;
const ACTOR: &str = "consolidator";

/// Plans and applies consolidation for `scope`; returns what was done.
pub fn run(
    conn: &mut Connection,
    scope: &str,
    now_ms: i64,
    policy: &ConsolidationPolicy,
) -> Result<Vec<Step>, MemoryError> {
    let units = db::active_in_scope(conn, scope, None, MAX_UNITS)?;
    let steps = plan(&units, now_ms, policy);
    for step in &steps {
        match step {
            Step::Supersede { old, new, .. } => {
                db::supersede(conn, old, new, ACTOR, now_ms)?;
            }
            Step::Archive { id, .. } => {
                db::archive(conn, id, ACTOR, now_ms)?;
            }
            Step::Decay { id, importance } => {
                let patch = UnitPatch {
                    importance: Some(*importance),
                    ..UnitPatch::default()
                };
                db::update(conn, id, &patch, ACTOR, now_ms, None)?;
            }
        }
    }
    Ok(steps)
}

/// Which of two units stays when they say the same thing.
fn keep_order(a: &MemoryUnit, b: &MemoryUnit) -> std::cmp::Ordering {
    (a.pinned, a.importance, a.created_ms, &a.id)
        .partial_cmp(&(b.pinned, b.importance, b.created_ms, &b.id))
        .unwrap_or(std::cmp::Ordering::Equal)
}

fn duplicate(keeper: &MemoryUnit, other: &MemoryUnit) -> Option<String> {
    if normalized(&keeper.content) == normalized(&other.content) {
        return Some("the same text".into());
    }
    let s = similarity(&keeper.content, &other.content);
    let bar = threshold_for(keeper.fact_key.as_deref(), other.fact_key.as_deref());
    (s >= bar).then(|| format!("near duplicate (similarity {s:.2})"))
}

fn decayed(u: &MemoryUnit, now_ms: i64, policy: &ConsolidationPolicy) -> Option<f32> {
    let last = u.last_accessed_ms.unwrap_or(u.updated_ms).max(u.updated_ms);
    let idle_days = (now_ms - last) as f32 / DAY_MS as f32;
    if idle_days < policy.decay_after_days {
        return None;
    }
    let halvings = (idle_days - policy.decay_after_days) / policy.decay_half_life_days.max(1.0);
    let target = (u.importance * 0.5f32.powf(halvings)).max(policy.min_importance);
    (u.importance - target >= policy.min_change).then_some(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit::Source;

    fn unit(id: &str, kind: Kind, content: &str, created_ms: i64) -> MemoryUnit {
        MemoryUnit {
            id: id.into(),
            scope: "s".into(),
            kind,
            content: content.into(),
            summary: String::new(),
            fact_key: None,
            importance: 0.8,
            confidence: 0.8,
            pinned: false,
            status: Status::Active,
            superseded_by: None,
            source: Source::Extracted,
            source_session: None,
            source_turn: None,
            tags: vec![],
            entities: vec![],
            access_count: 0,
            last_accessed_ms: None,
            created_ms,
            updated_ms: created_ms,
            expires_ms: None,
            version: 1,
        }
    }

    #[test]
    fn duplicates_summaries_and_expiry() {
        let now = 100 * DAY_MS;
        let mut pinned = unit("p", Kind::Preference, "Prefers tabs over spaces.", now - 5);
        pinned.pinned = true;
        let dup = unit("d", Kind::Preference, "prefers tabs over spaces", now - 4);
        let other = unit(
            "o",
            Kind::Preference,
            "Likes dark themes in every editor.",
            now - 3,
        );
        let s1 = unit("s1", Kind::WorkingSummary, "session one", now - 30);
        let s2 = unit("s2", Kind::WorkingSummary, "session two", now - 20);
        let mut expired = unit("e", Kind::Semantic, "The sprint ends Friday.", now - 10);
        expired.expires_ms = Some(now - 1);
        let steps = plan(
            &[pinned, dup, other, s1, s2, expired],
            now,
            &ConsolidationPolicy::default(),
        );
        assert!(steps.contains(&Step::Supersede {
            old: "d".into(),
            new: "p".into(),
            reason: "the same text".into()
        }));
        assert!(steps.contains(&Step::Supersede {
            old: "s1".into(),
            new: "s2".into(),
            reason: "an older session summary".into()
        }));
        assert!(steps.contains(&Step::Archive {
            id: "e".into(),
            reason: "expired".into()
        }));
        assert!(
            !steps
                .iter()
                .any(|s| matches!(s, Step::Supersede { old, .. } if old == "o" || old == "p"))
        );
    }

    #[test]
    fn decay_spares_pinned_and_recent_units() {
        let now = 400 * DAY_MS;
        let old = unit("old", Kind::Semantic, "A fact from long ago.", 0);
        let recent = unit("new", Kind::Semantic, "A fresh fact.", now - DAY_MS);
        let mut pinned = unit("pin", Kind::Semantic, "A pinned old fact.", 0);
        pinned.pinned = true;
        let steps = plan(&[old, recent, pinned], now, &ConsolidationPolicy::default());
        assert_eq!(steps.len(), 1, "{steps:?}");
        match &steps[0] {
            Step::Decay { id, importance } => {
                assert_eq!(id, "old");
                assert!(*importance < 0.8 && *importance >= 0.1);
            }
            other => panic!("{other:?}"),
        }
    }
}
