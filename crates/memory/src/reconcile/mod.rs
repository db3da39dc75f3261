//! Reconciliation: what to do with a candidate memory given the most similar stored units.
//!
//! Rules, in order (only `Active` units count; the caller passes units of the candidate's
//! scope, usually those sharing its fact key plus the top lexical matches):
//!
//! 1. **Same content** — a unit whose normalised content equals the candidate's →
//!    `Ignore { duplicate_of }`.
//! 2. **Same slot** — a unit with the same `fact_key`:
//!    - the candidate's tokens are a subset of the unit's (nothing new) → `Ignore`;
//!    - the unit's tokens are a strict subset of the candidate's (a more specific
//!      restatement: "tabs" → "tabs, width 4") → `Update { id, content }`;
//!    - otherwise the value changed ("tabs" → "spaces") → `Supersede { old_id }`: for one
//!      slot the newest statement wins and the old unit stays in history. A reworded
//!      restatement under the same slot is superseded too: lexical similarity cannot tell
//!      "tabs → spaces" from a paraphrase, and keeping a stale value is worse than replacing
//!      a wording.
//! 3. **Same meaning** — [`similarity`] ≥ [`DUPLICATE_THRESHOLD`] with any unit →
//!    `Ignore { duplicate_of }` (the most similar one). When both carry fact keys and the
//!    keys differ, the bar is [`DIFFERENT_SLOT_THRESHOLD`]: "uses PostgreSQL" and "uses
//!    MySQL" under `project:postgresql` and `project:mysql` are two facts, however alike.
//! 4. Otherwise → `Add`.
//!
//! **Pinned units are never changed automatically.** Where rule 2 would update or supersede
//! a pinned unit, the decision is `AddBesidePinned { pinned_id }`: the candidate is stored
//! next to it (the user's statement is not lost) and the pair can be shown for review; the
//! pinned unit stays active and is still injected first. Duplicates of a pinned unit are
//! ignored as usual.

mod batch;
mod similarity;

pub use batch::reconcile_batch;
pub use similarity::{DIFFERENT_SLOT_THRESHOLD, DUPLICATE_THRESHOLD, similarity, threshold_for};

use crate::extract::Candidate;
use crate::text::{normalized, token_set};
use crate::unit::{MemoryUnit, Status};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Store the candidate as a new unit.
    Add,
    /// Already known: store nothing.
    Ignore { duplicate_of: String },
    /// Rewrite unit `id` in place with `content` (a more specific restatement).
    Update { id: String, content: String },
    /// Store the candidate and mark `old_id` superseded by it.
    Supersede { old_id: String },
    /// Store the candidate beside the pinned unit it contradicts or refines, which stays
    /// untouched.
    AddBesidePinned { pinned_id: String },
}

/// The decision for one candidate; see the module documentation for the rules.
pub fn decide(candidate: &Candidate, similar: &[MemoryUnit]) -> Decision {
    let active: Vec<&MemoryUnit> = similar
        .iter()
        .filter(|u| u.status == Status::Active)
        .collect();
    let norm = normalized(&candidate.content);
    if let Some(u) = active.iter().find(|u| normalized(&u.content) == norm) {
        return Decision::Ignore {
            duplicate_of: u.id.clone(),
        };
    }
    if let Some(key) = &candidate.fact_key
        && let Some(decision) = same_slot(candidate, key, &active)
    {
        return decision;
    }
    let best = active
        .iter()
        .map(|u| (similarity(&candidate.content, &u.content), *u))
        .filter(|(s, u)| *s >= threshold_for(candidate.fact_key.as_deref(), u.fact_key.as_deref()))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, u)) => Decision::Ignore {
            duplicate_of: u.id.clone(),
        },
        None => Decision::Add,
    }
}

/// Rule 2 against the most similar unit holding the same slot.
fn same_slot(candidate: &Candidate, key: &str, active: &[&MemoryUnit]) -> Option<Decision> {
    let unit = active
        .iter()
        .filter(|u| u.fact_key.as_deref() == Some(key))
        .max_by(|a, b| {
            let sa = similarity(&candidate.content, &a.content);
            let sb = similarity(&candidate.content, &b.content);
            sa.total_cmp(&sb)
        })?;
    let new = token_set(&candidate.content);
    let old = token_set(&unit.content);
    if new.is_subset(&old) {
        return Some(Decision::Ignore {
            duplicate_of: unit.id.clone(),
        });
    }
    if unit.pinned {
        return Some(Decision::AddBesidePinned {
            pinned_id: unit.id.clone(),
        });
    }
    Some(if old.is_subset(&new) {
        Decision::Update {
            id: unit.id.clone(),
            content: candidate.content.clone(),
        }
    } else {
        Decision::Supersede {
            old_id: unit.id.clone(),
        }
    })
}
