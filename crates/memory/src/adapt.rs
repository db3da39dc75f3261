//! The adaptive side of the retrieval policy: after every [`WINDOW`] retrievals in a scope,
//! at most one bounded, one-step change, with a sentence saying why.
//!
//! Only two knobs move, each inside fixed bounds: the relevance threshold
//! (`min_lexical_score`, 0.05..=0.40 in steps of 0.05) and how many hits are shown
//! (`max_units`, 3..=10 in steps of 1). Weights are left to people: they change what
//! "relevant" means, and no signal the proxy sees says which meaning is right. The earlier
//! version rewrote its policy on nearly every ingestion and ratcheted weights without bound;
//! here a change needs a full window of evidence, and the counters restart after each one.

use serde::{Deserialize, Serialize};

use crate::policy::RetrievalPolicy;

/// Retrievals (prompts with something searchable) per decision.
pub const WINDOW: u32 = 50;
pub const MIN_LEXICAL_FLOOR: f32 = 0.05;
pub const MIN_LEXICAL_CEILING: f32 = 0.40;
pub const LEXICAL_STEP: f32 = 0.05;
pub const MAX_UNITS_FLOOR: usize = 3;
pub const MAX_UNITS_CEILING: usize = 10;
/// A threshold is only lowered for a scope holding at least this many active units: in a
/// small memory, most prompts finding nothing is simply the truth.
const MIN_POOL: u64 = 20;

/// What one retrieval found, reported by the request path to the background worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Outcome {
    /// The prompt had searchable terms (otherwise it says nothing about the policy).
    pub searched: bool,
    /// Unpinned hits that passed the threshold, up to `max_units + max_pinned`.
    pub matched: usize,
    /// Unpinned hits rendered into the prompt.
    pub shown: usize,
}

/// Retrievals counted since the last decision in one scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Evidence {
    pub retrievals: u32,
    /// Retrievals whose query matched no unit.
    pub nothing_found: u32,
    /// Retrievals with more matches than `max_units` allowed to show.
    pub more_than_shown: u32,
    /// Retrievals matching at most half of `max_units`.
    pub few_found: u32,
}

impl Evidence {
    /// Counts `o` against the policy in force when it happened.
    pub fn count(&mut self, o: Outcome, max_units: usize) {
        if !o.searched {
            return;
        }
        self.retrievals += 1;
        self.nothing_found += u32::from(o.matched == 0);
        self.more_than_shown += u32::from(o.matched > max_units);
        self.few_found += u32::from(o.matched * 2 <= max_units);
    }

    pub fn is_full(&self) -> bool {
        self.retrievals >= WINDOW
    }
}

/// A decided change.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub policy: RetrievalPolicy,
    pub reason: String,
}

/// The change the evidence calls for, if any. `base` is the configured policy: `max_units`
/// is only lowered back towards it, never below it, so adaptation undoes its own increases
/// but not a person's choice. `active_units` is the scope's size.
pub fn decide(
    current: &RetrievalPolicy,
    base: &RetrievalPolicy,
    ev: &Evidence,
    active_units: u64,
) -> Option<Change> {
    let n = ev.retrievals;
    if n < WINDOW {
        return None;
    }
    let share = |k: u32| f64::from(k) / f64::from(n);
    let mut next = current.clone();
    let threshold = current.min_lexical_score;
    let reason = if share(ev.nothing_found) >= 0.6
        && active_units >= MIN_POOL
        && threshold > MIN_LEXICAL_FLOOR + f32::EPSILON
    {
        next.min_lexical_score = step(threshold, -LEXICAL_STEP);
        format!(
            "{} of the last {n} prompts found no memory although the scope holds {active_units} \
             units: relevance threshold lowered from {threshold:.2} to {:.2}",
            ev.nothing_found, next.min_lexical_score
        )
    } else if share(ev.more_than_shown) >= 0.5 && current.max_units < MAX_UNITS_CEILING {
        next.max_units = current.max_units + 1;
        format!(
            "{} of the last {n} prompts matched more memories than the {} shown: showing {}",
            ev.more_than_shown, current.max_units, next.max_units
        )
    } else if share(ev.more_than_shown) >= 0.5 && threshold < MIN_LEXICAL_CEILING - f32::EPSILON {
        next.min_lexical_score = step(threshold, LEXICAL_STEP);
        format!(
            "{} of the last {n} prompts matched more memories than the {} shown, already the \
             most: relevance threshold raised from {threshold:.2} to {:.2}",
            ev.more_than_shown, current.max_units, next.min_lexical_score
        )
    } else if share(ev.few_found) >= 0.8 && current.max_units > base.max_units.max(MAX_UNITS_FLOOR)
    {
        next.max_units = current.max_units - 1;
        format!(
            "{} of the last {n} prompts matched at most half of the {} memories that may be \
             shown: showing {} again",
            ev.few_found, current.max_units, next.max_units
        )
    } else {
        return None;
    };
    Some(Change {
        policy: next,
        reason,
    })
}

/// `v + delta`, on the 0.05 grid and within the threshold's bounds (so float drift never
/// accumulates across many steps).
fn step(v: f32, delta: f32) -> f32 {
    let stepped = ((v + delta) / LEXICAL_STEP).round() * LEXICAL_STEP;
    stepped.clamp(MIN_LEXICAL_FLOOR, MIN_LEXICAL_CEILING)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(outcomes: &[(usize, u32)], max_units: usize) -> Evidence {
        let mut ev = Evidence::default();
        for &(matched, times) in outcomes {
            for _ in 0..times {
                ev.count(
                    Outcome {
                        searched: true,
                        matched,
                        shown: matched.min(max_units),
                    },
                    max_units,
                );
            }
        }
        ev
    }

    #[test]
    fn nothing_before_a_full_window_and_unsearchable_prompts_do_not_count() {
        let p = RetrievalPolicy::default();
        let mut ev = evidence(&[(0, WINDOW - 1)], 6);
        ev.count(Outcome::default(), 6);
        assert_eq!(ev.retrievals, WINDOW - 1);
        assert!(decide(&p, &p, &ev, 1_000).is_none());
    }

    #[test]
    fn mostly_empty_retrievals_lower_the_threshold_one_step_down_to_the_floor() {
        let base = RetrievalPolicy::default();
        let ev = evidence(&[(0, 35), (2, 15)], 6);
        let c = decide(&base, &base, &ev, 500).unwrap();
        assert!((c.policy.min_lexical_score - 0.10).abs() < 1e-6);
        assert!(c.reason.contains("35 of the last 50"), "{}", c.reason);
        assert!(c.reason.contains("0.15 to 0.10"), "{}", c.reason);
        let c2 = decide(&c.policy, &base, &ev, 500).unwrap();
        assert!((c2.policy.min_lexical_score - 0.05).abs() < 1e-6);
        assert!(decide(&c2.policy, &base, &ev, 500).is_none(), "floor");
        assert!(decide(&base, &base, &ev, 5).is_none(), "a small memory");
    }

    #[test]
    fn crowded_retrievals_show_more_then_get_pickier() {
        let base = RetrievalPolicy::default();
        let ev = evidence(&[(9, 30), (3, 20)], 6);
        let c = decide(&base, &base, &ev, 500).unwrap();
        assert_eq!(c.policy.max_units, 7);
        let at_ceiling = RetrievalPolicy {
            max_units: MAX_UNITS_CEILING,
            ..base.clone()
        };
        let ev = evidence(&[(14, 30), (3, 20)], MAX_UNITS_CEILING);
        let c = decide(&at_ceiling, &base, &ev, 500).unwrap();
        assert_eq!(c.policy.max_units, MAX_UNITS_CEILING);
        assert!((c.policy.min_lexical_score - 0.20).abs() < 1e-6);
        assert!(c.reason.contains("raised"), "{}", c.reason);
    }

    #[test]
    fn sparse_retrievals_undo_increases_but_never_go_below_the_configured_count() {
        let base = RetrievalPolicy::default();
        let grown = RetrievalPolicy {
            max_units: 8,
            ..base.clone()
        };
        let ev = evidence(&[(1, 45), (6, 5)], 8);
        let c = decide(&grown, &base, &ev, 500).unwrap();
        assert_eq!(c.policy.max_units, 7);
        let ev = evidence(&[(1, 50)], 6);
        assert!(decide(&base, &base, &ev, 500).is_none());
    }

    #[test]
    fn every_decision_stays_valid_and_bounded() {
        let base = RetrievalPolicy::default();
        let mut p = base.clone();
        for round in 0..200 {
            let matched = if round % 3 == 0 { 0 } else { 20 };
            let ev = evidence(&[(matched, WINDOW)], p.max_units);
            if let Some(c) = decide(&p, &base, &ev, 1_000) {
                p = c.policy;
            }
            p.validate().unwrap();
            assert!(
                (MIN_LEXICAL_FLOOR..=MIN_LEXICAL_CEILING + 1e-6).contains(&p.min_lexical_score)
            );
            assert!((MAX_UNITS_FLOOR..=MAX_UNITS_CEILING).contains(&p.max_units));
        }
    }
}
