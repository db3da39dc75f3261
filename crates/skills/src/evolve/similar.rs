//! Near-duplicate detection between a proposed skill and existing ones.
//!
//! Token sets come from `retrieval::tokenize` (stemmed, stopwords dropped) and are compared
//! with an IDF-weighted Jaccard, separately over the head (name + description) and the
//! body: shared rare words ("flaky", "pipefail") say far more than shared common ones
//! ("use", "step"), which plain Jaccard weighs the same. Document frequencies come from the
//! skills being compared against, so the measure adapts to the library; with one or two
//! skills every weight is equal and it is plain Jaccard.
//!
//! Calibration on the 71 built-in skills (see `tests/evolve.rs`): the closest pair of
//! distinct built-ins (`api-design` / `network-request-debugging`) has a mean of 0.144 and no
//! side above 0.16; paraphrases of built-ins score 0.31–0.43, and an independently written
//! "shell script safety" skill scores 0.20 against `shell-scripting-safely`.

use std::collections::{BTreeSet, HashMap};

use crate::retrieval::tokenize;

/// Mean of head and body overlap at or above which two skills are the same skill.
pub const MEAN_THRESHOLD: f32 = 0.18;
/// Either side alone at or above this is a duplicate too: same trigger with new steps, or
/// the same steps under a new name.
pub const SIDE_THRESHOLD: f32 = 0.45;

/// The token sets compared; built once per skill.
#[derive(Debug, Clone, Default)]
pub struct Fingerprint {
    head: BTreeSet<String>,
    body: BTreeSet<String>,
}

impl Fingerprint {
    pub fn new(name: &str, description: &str, body: &str) -> Fingerprint {
        Fingerprint {
            head: tokenize(&format!("{name} {description}"))
                .into_iter()
                .collect(),
            body: tokenize(body).into_iter().collect(),
        }
    }
}

/// Document frequencies of the skills compared against.
#[derive(Debug, Default)]
pub struct Corpus {
    df: HashMap<String, u32>,
    docs: u32,
}

impl Corpus {
    pub fn new<'a>(fingerprints: impl IntoIterator<Item = &'a Fingerprint>) -> Corpus {
        let mut c = Corpus::default();
        for f in fingerprints {
            c.docs += 1;
            for t in f.head.union(&f.body) {
                *c.df.entry(t.clone()).or_default() += 1;
            }
        }
        c
    }

    fn idf(&self, term: &str) -> f32 {
        let df = self.df.get(term).copied().unwrap_or(0).max(1);
        (1.0 + self.docs.max(1) as f32 / df as f32).ln()
    }

    fn jaccard(&self, a: &BTreeSet<String>, b: &BTreeSet<String>) -> f32 {
        let shared: f32 = a.intersection(b).map(|t| self.idf(t)).sum();
        let all: f32 = a.union(b).map(|t| self.idf(t)).sum();
        if all > 0.0 { shared / all } else { 0.0 }
    }

    pub fn similarity(&self, a: &Fingerprint, b: &Fingerprint) -> Similarity {
        Similarity {
            head: self.jaccard(&a.head, &b.head),
            body: self.jaccard(&a.body, &b.body),
        }
    }
}

/// Overlap of two skills, each side in 0..=1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Similarity {
    pub head: f32,
    pub body: f32,
}

impl Similarity {
    pub fn mean(&self) -> f32 {
        (self.head + self.body) / 2.0
    }

    pub fn is_near_duplicate(&self) -> bool {
        self.mean() >= MEAN_THRESHOLD || self.head.max(self.body) >= SIDE_THRESHOLD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_and_disjoint() {
        let a = Fingerprint::new(
            "rust-lifetimes",
            "borrow checker errors",
            "lifetimes borrow",
        );
        let b = Fingerprint::new("meal-plan", "weekly groceries", "recipes shopping list");
        let c = Corpus::new([&a, &b]);
        let same = c.similarity(&a, &a);
        assert!((same.head - 1.0).abs() < 1e-6 && (same.body - 1.0).abs() < 1e-6);
        assert!(same.is_near_duplicate());
        let diff = c.similarity(&a, &b);
        assert_eq!((diff.head, diff.body), (0.0, 0.0));
        assert!(!diff.is_near_duplicate());
        let empty = Fingerprint::default();
        assert_eq!(c.similarity(&empty, &empty).mean(), 0.0);
    }
}
