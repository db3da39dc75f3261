//! Reconciling a batch of candidates: deduplicated among themselves first, then each decided
//! against the units similar to it.

use super::{Decision, decide, similarity, threshold_for};
use crate::extract::Candidate;
use crate::text::{normalized, token_set};
use crate::unit::MemoryUnit;

/// Each surviving candidate with its decision, in the order of the batch.
///
/// Within the batch: a candidate that restates an earlier one (same normalised content, or
/// similarity ≥ [`super::DUPLICATE_THRESHOLD`], or the higher bar between different slots) is
/// dropped; one holding the same `fact_key` as an
/// earlier one replaces it (the later statement wins) unless it adds nothing (its tokens
/// are a subset of the earlier one's), in which case it is dropped. Dropped candidates do not
/// appear in the result. `similar_for` is called once per surviving candidate.
pub fn reconcile_batch(
    cands: Vec<Candidate>,
    similar_for: impl Fn(&Candidate) -> Vec<MemoryUnit>,
) -> Vec<(Candidate, Decision)> {
    let mut kept: Vec<Candidate> = Vec::new();
    for c in cands {
        let same_slot = c
            .fact_key
            .as_ref()
            .and_then(|k| kept.iter().position(|e| e.fact_key.as_ref() == Some(k)));
        if let Some(i) = same_slot {
            if !token_set(&c.content).is_subset(&token_set(&kept[i].content)) {
                kept[i] = c;
            }
            continue;
        }
        let norm = normalized(&c.content);
        let duplicate = kept.iter().any(|e| {
            normalized(&e.content) == norm
                || similarity(&e.content, &c.content)
                    >= threshold_for(e.fact_key.as_deref(), c.fact_key.as_deref())
        });
        if !duplicate {
            kept.push(c);
        }
    }
    kept.into_iter()
        .map(|c| {
            let decision = decide(&c, &similar_for(&c));
            (c, decision)
        })
        .collect()
}
