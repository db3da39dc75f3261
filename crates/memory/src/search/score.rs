//! Rescoring candidates: relevance first, then importance, recency, confidence and kind.
//!
//! Relevance is the idf-weighted share of the query's terms a unit holds, relative to the
//! best candidate (so the best match scores 1). Memory units are short, so whether a term
//! occurs says nearly everything; how often it occurs says little.

use serde::Serialize;

use super::candidates::Row;
use crate::policy::RetrievalPolicy;

const MS_PER_DAY: f64 = 86_400_000.0;

/// What a hit's score is made of. Each part is already multiplied by its weight, so
/// `score` is their sum.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Components {
    /// Relevance relative to the best candidate (0..=1), times its weight.
    pub lexical: f32,
    pub importance: f32,
    /// Halves every `recency_half_life_days` since the unit was last used or edited.
    pub recency: f32,
    pub confidence: f32,
    /// The embedding cosine to the query relative to the best one (0..=1; 0 without
    /// embeddings), times its weight.
    pub semantic: f32,
    pub kind_boost: f32,
    pub pinned: bool,
}

impl Components {
    pub fn total(&self) -> f32 {
        self.lexical
            + self.semantic
            + self.importance
            + self.recency
            + self.confidence
            + self.kind_boost
    }
}

/// Inverse document frequency, always positive: rare terms weigh more.
pub fn idf(df: u64, n_docs: u64) -> f32 {
    let (df, n) = (df.max(1) as f64, n_docs.max(1) as f64);
    (1.0 + (n - df + 0.5).max(0.0) / (df + 0.5)).ln() as f32
}

/// The summed idf of the terms present.
pub fn coverage(present: &[bool], idfs: &[f32]) -> f32 {
    present
        .iter()
        .zip(idfs)
        .filter(|(p, _)| **p)
        .map(|(_, w)| *w)
        .sum()
}

/// 1 for a unit touched now, 0.5 after one half-life, and so on. The later of the last use
/// and the last edit counts; a future timestamp counts as now.
pub fn recency(updated_ms: i64, last_accessed_ms: Option<i64>, now_ms: i64, half_life: f32) -> f32 {
    let touched = last_accessed_ms.unwrap_or(i64::MIN).max(updated_ms);
    let age_days = now_ms.saturating_sub(touched).max(0) as f64 / MS_PER_DAY;
    0.5_f64.powf(age_days / f64::from(half_life.max(f32::MIN_POSITIVE))) as f32
}

/// The weighted parts of a candidate's score; `lexical` is already normalised (0..=1) and
/// `cosine` is relative to the best (0..=1), 0 without embeddings.
pub fn components(
    row: &Row,
    lexical: f32,
    cosine: f32,
    policy: &RetrievalPolicy,
    now_ms: i64,
) -> Components {
    let recency = recency(
        row.updated_ms,
        row.last_accessed_ms,
        now_ms,
        policy.recency_half_life_days,
    );
    Components {
        lexical: policy.lexical_weight * lexical,
        importance: policy.importance_weight * row.importance.clamp(0.0, 1.0),
        recency: policy.recency_weight * recency,
        confidence: policy.confidence_weight * row.confidence.clamp(0.0, 1.0),
        semantic: policy.semantic_weight * cosine.clamp(0.0, 1.0),
        kind_boost: policy.kind_boosts.get(row.kind),
        pinned: row.pinned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_terms_weigh_more_and_idf_stays_positive() {
        assert!(idf(1, 100_000) > idf(5_000, 100_000));
        assert!(idf(100_000, 100_000) > 0.0);
        assert!(idf(0, 0) > 0.0);
        assert_eq!(coverage(&[true, false, true], &[1.0, 5.0, 2.0]), 3.0);
    }

    #[test]
    fn recency_halves_per_half_life() {
        let day = 86_400_000;
        assert!((recency(0, None, 30 * day, 30.0) - 0.5).abs() < 1e-6);
        assert!((recency(0, Some(30 * day), 30 * day, 30.0) - 1.0).abs() < 1e-6);
        assert!((recency(10 * day, None, 0, 30.0) - 1.0).abs() < 1e-6);
    }
}
