//! The retrieval policy: how many units, how candidates are scored, how the budget is shared.
//!
//! Every field has a default chosen for the common case (a personal agent with a few hundred
//! to a few hundred thousand units per scope); `validate` rejects values that would make
//! retrieval meaningless (negative weights, shares outside 0..=1, a zero half-life).

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::unit::Kind;

/// How memories are picked and ranked for a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalPolicy {
    /// Query hits rendered per prompt (pinned units are counted by `max_pinned`). Six is what
    /// the earlier version injected; more mostly adds noise the model has to read past.
    pub max_units: usize,
    /// Pinned units rendered per prompt, whatever the query. Pinning is a person's explicit
    /// choice, so a few are always shown; many would crowd out what the query needs.
    pub max_pinned: usize,
    /// Candidates whose lexical score (the idf-weighted share of query terms they hold,
    /// relative to the best candidate, 0..=1) is below this are left out of prompts. 0.15
    /// keeps partial matches but drops units that share only one common word with a long
    /// query. Search itself ranks every match (a ranked list can show weak matches last).
    pub min_lexical_score: f32,
    /// Weight of the lexical score. 1.0: relevance to the query dominates; the other terms
    /// only reorder close matches.
    pub lexical_weight: f32,
    /// Weight of the unit's importance (0..=1). 0.3: an important fact beats a slightly
    /// better-matching trivial one, never a much better match.
    pub importance_weight: f32,
    /// Weight of recency (0..=1, halving every `recency_half_life_days`). 0.15: freshness
    /// breaks ties between similar units; old facts stay retrievable.
    pub recency_weight: f32,
    /// Weight of the extractor's confidence (0..=1). 0.1: a small nudge; confidence is an
    /// estimate by a model, not a measurement.
    pub confidence_weight: f32,
    /// Weight of the cosine between the query's and the unit's embeddings, when embeddings
    /// are on (`memory.retrieval_mode: hybrid | embedding`). 0 in keyword mode; 0.5 in
    /// hybrid: meaning counts half as much as the words actually shared.
    pub semantic_weight: f32,
    /// A unit sharing too few words with the query still qualifies when its cosine reaches
    /// this. 0.5: clearly related in meaning, for typical embedding models; lower admits
    /// loosely related units.
    pub min_similarity: f32,
    /// Days after which the recency term halves, counted from the last use or edit. 30 days:
    /// this month's work ranks above last quarter's without erasing it.
    pub recency_half_life_days: f32,
    /// Share (0..=1) of the memory budget pinned units may use; they are placed first. 0.3
    /// guarantees them room and still leaves most of the budget to what the query needs.
    pub pinned_share: f32,
    /// Most query terms sent to full-text search. Long user messages would otherwise make
    /// an OR of hundreds of terms, slow and unfocused; 16 covers any real question.
    pub max_query_terms: usize,
    /// Tokens of the standing-rules profile (the user's preferences and workflow rules, see
    /// `profile`), rendered first on every turn on top of the memory budget. 300 holds a
    /// dozen short rules; only a profile larger than that is cut down to the rules that fit
    /// the request, so a rule stated once stands even for requests sharing no word with it.
    /// 0 turns the profile off (rules are then retrieved like any memory); the engine takes
    /// it from `memory.profile_tokens`.
    pub profile_tokens: usize,
    /// Added to the score by kind.
    pub kind_boosts: KindBoosts,
}

/// Additive score adjustments per kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KindBoosts {
    /// 0: the baseline.
    pub preference: f32,
    /// 0: the baseline.
    pub project_state: f32,
    /// 0: the baseline.
    pub procedural_observation: f32,
    /// 0: the baseline.
    pub semantic: f32,
    /// 0: a session digest is ranked after every other kind anyway (see `search`), so it
    /// never takes the place of something the user taught.
    pub working_summary: f32,
    /// −0.05: episodes are the least distilled kind; a fact or preference saying the same
    /// thing should win.
    pub episodic: f32,
}

impl Default for KindBoosts {
    fn default() -> Self {
        KindBoosts {
            preference: 0.0,
            project_state: 0.0,
            procedural_observation: 0.0,
            semantic: 0.0,
            working_summary: 0.0,
            episodic: -0.05,
        }
    }
}

impl KindBoosts {
    pub fn get(&self, kind: Kind) -> f32 {
        match kind {
            Kind::Preference => self.preference,
            Kind::ProjectState => self.project_state,
            Kind::ProceduralObservation => self.procedural_observation,
            Kind::Semantic => self.semantic,
            Kind::WorkingSummary => self.working_summary,
            Kind::Episodic => self.episodic,
        }
    }
}

/// Largest standing-rules profile: a profile is paid on every turn, and past this it is no
/// longer "a short profile" but a second memory budget.
pub const MAX_PROFILE_TOKENS: usize = 4000;

impl Default for RetrievalPolicy {
    fn default() -> Self {
        RetrievalPolicy {
            max_units: 6,
            max_pinned: 4,
            min_lexical_score: 0.15,
            lexical_weight: 1.0,
            importance_weight: 0.3,
            recency_weight: 0.15,
            confidence_weight: 0.1,
            semantic_weight: 0.0,
            min_similarity: 0.5,
            recency_half_life_days: 30.0,
            pinned_share: 0.3,
            max_query_terms: 16,
            profile_tokens: 300,
            kind_boosts: KindBoosts::default(),
        }
    }
}

/// Why a policy was rejected.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("invalid retrieval policy: {field} {problem}")]
pub struct PolicyError {
    pub field: &'static str,
    pub problem: &'static str,
}

impl RetrievalPolicy {
    /// Checks every field; the first problem found is returned.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let err = |field, problem| Err(PolicyError { field, problem });
        let weights = [
            ("lexical_weight", self.lexical_weight),
            ("importance_weight", self.importance_weight),
            ("recency_weight", self.recency_weight),
            ("confidence_weight", self.confidence_weight),
            ("semantic_weight", self.semantic_weight),
        ];
        for (field, w) in weights {
            if !w.is_finite() || w < 0.0 {
                return err(field, "must be a finite number >= 0");
            }
        }
        if self.lexical_weight == 0.0 {
            return err("lexical_weight", "must be > 0 (the query would not matter)");
        }
        for (field, v) in [
            ("min_lexical_score", self.min_lexical_score),
            ("pinned_share", self.pinned_share),
            ("min_similarity", self.min_similarity),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return err(field, "must be between 0 and 1");
            }
        }
        let h = self.recency_half_life_days;
        if !h.is_finite() || h <= 0.0 {
            return err("recency_half_life_days", "must be > 0");
        }
        if self.max_units == 0 {
            return err("max_units", "must be at least 1");
        }
        if self.max_query_terms == 0 {
            return err("max_query_terms", "must be at least 1");
        }
        if self.profile_tokens > MAX_PROFILE_TOKENS {
            return err("profile_tokens", "must be at most 4000");
        }
        let b = &self.kind_boosts;
        for v in [
            b.preference,
            b.project_state,
            b.procedural_observation,
            b.semantic,
            b.working_summary,
            b.episodic,
        ] {
            if !v.is_finite() || v.abs() > 1.0 {
                return Err(PolicyError {
                    field: "kind_boosts",
                    problem: "must be between -1 and 1",
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_round_trips() {
        let p = RetrievalPolicy::default();
        p.validate().unwrap();
        let json = serde_json::to_string(&p).unwrap();
        let back: RetrievalPolicy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        let partial: RetrievalPolicy = serde_json::from_str(r#"{"max_units": 3}"#).unwrap();
        assert_eq!(partial.max_units, 3);
        assert_eq!(partial.pinned_share, 0.3);
        assert!(serde_json::from_str::<RetrievalPolicy>(r#"{"nope": 1}"#).is_err());
    }

    #[test]
    fn rejects_nonsense() {
        let bad = [
            RetrievalPolicy {
                pinned_share: 1.5,
                ..Default::default()
            },
            RetrievalPolicy {
                importance_weight: -0.1,
                ..Default::default()
            },
            RetrievalPolicy {
                recency_half_life_days: 0.0,
                ..Default::default()
            },
            RetrievalPolicy {
                lexical_weight: f32::NAN,
                ..Default::default()
            },
            RetrievalPolicy {
                max_units: 0,
                ..Default::default()
            },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
    }
}
