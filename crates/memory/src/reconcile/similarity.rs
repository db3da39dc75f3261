//! Lexical similarity of two memory contents.
//!
//! Dice coefficient over the token sets of `crate::text::tokens` (Unicode words, CJK
//! character bigrams, stopwords dropped, plurals folded). Dice rather than Jaccard because
//! memories are short: one differing word in a five-word sentence should not halve the
//! score.
//!
//! Thresholds measured on `tests/fixtures/similarity_pairs.json` (27 pairs, five languages;
//! checked by `tests/reconcile_similarity.rs`): restatements of one fact score 0.80–1.0;
//! distinct facts, including a changed value in a short sentence (tabs → spaces: 0.50–0.67,
//! 深色 → 浅色: 0.714), score at most 0.714 — except a one-token value change inside a long
//! CJK sentence (PostgreSQL → MySQL in 用户的项目使用…数据库: 0.889), which no lexical
//! threshold separates from a restatement. Fact keys decide those: two different slots need
//! [`DIFFERENT_SLOT_THRESHOLD`].

use std::collections::BTreeSet;

use crate::text::token_set;

/// Similarity at or above which a candidate restates an existing unit (midway between the
/// highest distinct pair, 0.714, and the lowest restatement, 0.80).
pub const DUPLICATE_THRESHOLD: f32 = 0.75;
/// The same, when the candidate and the unit both carry fact keys and the keys differ: a
/// different slot is evidence of a different fact, so only a near-identical wording counts.
pub const DIFFERENT_SLOT_THRESHOLD: f32 = 0.9;

/// The bar for "same meaning" between two contents with these fact keys.
pub fn threshold_for(a: Option<&str>, b: Option<&str>) -> f32 {
    match (a, b) {
        (Some(a), Some(b)) if a != b => DIFFERENT_SLOT_THRESHOLD,
        _ => DUPLICATE_THRESHOLD,
    }
}

/// 0..=1; 1 for equal token sets, 0 when either side has no tokens.
pub fn similarity(a: &str, b: &str) -> f32 {
    dice(&token_set(a), &token_set(b))
}

pub(crate) fn dice(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    2.0 * shared as f32 / (a.len() + b.len()) as f32
}
