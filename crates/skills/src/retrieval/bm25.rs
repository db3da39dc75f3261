//! BM25F index over a skill bank, with every per-(term, skill) weight precomputed.
//!
//! BM25F rather than one concatenated document: each field's term frequency is
//! length-normalised against that field's own average before the fields are summed with
//! their weights, so a long body neither drowns a name match nor earns a skill extra credit
//! for saying a word many times. The summed frequency is then saturated once with `K1`.
//! A posting therefore holds `idf · saturated tf`, and a query only adds postings up.
//! `K1` is 2.0 rather than the usual 1.2 so that a name or tag match (weighted tf ≥ 3)
//! clearly outscores a lone body mention instead of both saturating near the maximum.
//!
//! Scores are divided by `idf_max · (K1 + 1)`, the most one term can contribute when it
//! occurs in a single skill: a score of 1.0 means "one rare term matched as strongly as
//! possible". That unit follows the bank's size, so one `min_score` fits a 40-skill bank
//! and a 10,000-skill one alike, and it does not shrink as queries grow longer.

use std::collections::HashMap;

use super::tokenize::for_each_token;
use crate::Skill;

const K1: f32 = 2.0;
const B: f32 = 0.75;

/// Field weights for name, tags, description, body and the requests a learned skill came
/// from: the name and tags say what a skill is for, the description when it applies, the
/// body only how to do it (and, being long, mentions many words in passing). The user's own
/// requests say what kind of task it is for as well as a description does.
const FIELDS: usize = 5;
const WEIGHTS: [f32; FIELDS] = [3.0, 3.0, 2.0, 0.5, 2.0];

/// What retrieval needs to know about an indexed skill.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub name: String,
    pub category: String,
    pub always: bool,
    pub builtin: bool,
    /// Term ids of the name, sorted: the words the skill is about.
    pub name_terms: Vec<u32>,
}

#[derive(Debug, Clone, Default)]
pub struct Index {
    pub(crate) docs: Vec<Doc>,
    vocab: HashMap<String, u32>,
    /// Term id → term, to report which query terms matched.
    terms: Vec<String>,
    /// Term id → `(doc, normalised weight)`, sorted by doc.
    postings: Vec<Vec<(u32, f32)>>,
}

impl Index {
    /// Indexes every skill that is not `disabled`.
    pub fn build(skills: &[Skill]) -> Index {
        Self::build_where(skills, |_| true)
    }

    /// Indexes the skills that are not `disabled` and pass `keep`.
    pub fn build_where(skills: &[Skill], keep: impl Fn(&Skill) -> bool) -> Index {
        let mut index = Index::default();
        // Pass 1: term ids per field, to learn the average field lengths.
        let mut fields: Vec<[Vec<u32>; FIELDS]> = Vec::new();
        for skill in skills.iter().filter(|s| !s.disabled && keep(s)) {
            let texts = [
                skill.name.as_str(),
                &skill.tags.join(" "),
                skill.description.as_str(),
                skill.body.as_str(),
                &skill.requests().join("\n"),
            ];
            let ids = texts.map(|t| index.intern_all(t));
            let mut name_terms = ids[0].clone();
            name_terms.sort_unstable();
            fields.push(ids);
            index.docs.push(Doc {
                name: skill.name.clone(),
                category: skill.category.clone(),
                always: skill.always,
                builtin: skill.source == crate::skill::Source::Builtin,
                name_terms,
            });
        }
        let n = fields.len().max(1) as f32;
        let mut avg = [0f32; FIELDS];
        for doc in &fields {
            for (a, f) in avg.iter_mut().zip(doc) {
                *a += f.len() as f32 / n;
            }
        }
        // Pass 2: per-doc weighted, length-normalised term frequencies.
        let mut tf: Vec<Vec<(u32, f32)>> = vec![Vec::new(); index.terms.len()];
        let mut acc: HashMap<u32, f32> = HashMap::new();
        for (doc, doc_fields) in fields.iter().enumerate() {
            acc.clear();
            for (f, ids) in doc_fields.iter().enumerate() {
                let norm = 1.0 - B + B * ids.len() as f32 / avg[f].max(1.0);
                for &id in ids {
                    *acc.entry(id).or_default() += WEIGHTS[f] / norm;
                }
            }
            for (&id, &t) in &acc {
                tf[id as usize].push((doc as u32, t));
            }
        }
        let idf = |df: f32| (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        let unit = idf(1.0) * (K1 + 1.0);
        index.postings = tf
            .into_iter()
            .map(|mut list| {
                list.sort_unstable_by_key(|&(d, _)| d);
                let w = idf(list.len() as f32) / unit;
                for (_, t) in &mut list {
                    *t = w * *t * (K1 + 1.0) / (*t + K1);
                }
                list
            })
            .collect();
        index
    }

    fn intern_all(&mut self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for_each_token(text, |t| {
            let next = self.terms.len() as u32;
            let id = *self.vocab.entry(t.to_owned()).or_insert(next);
            if id == next {
                self.terms.push(t.to_owned());
            }
            ids.push(id);
        });
        ids
    }

    /// Number of indexed (enabled) skills.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Ids of `terms` known to the bank.
    pub(crate) fn ids_of(&self, terms: &[String]) -> Vec<u32> {
        terms
            .iter()
            .filter_map(|t| self.vocab.get(t).copied())
            .collect()
    }

    /// The query's distinct terms known to the bank; unknown terms cannot score.
    pub(crate) fn query_terms(&self, query: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for_each_token(query, |t| {
            if let Some(&id) = self.vocab.get(t) {
                ids.push(id);
            }
        });
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Adds every posting of `terms` into `scores` (one slot per doc, zeroed by the caller)
    /// and lists each doc that scored once in `touched`.
    pub(crate) fn accumulate(&self, terms: &[u32], scores: &mut [f32], touched: &mut Vec<u32>) {
        for &t in terms {
            for &(doc, w) in &self.postings[t as usize] {
                let slot = &mut scores[doc as usize];
                if *slot == 0.0 {
                    touched.push(doc);
                }
                *slot += w;
            }
        }
    }

    /// Whether `term` occurs in `doc`.
    pub(crate) fn contains(&self, term: u32, doc: u32) -> bool {
        self.postings[term as usize]
            .binary_search_by_key(&doc, |&(d, _)| d)
            .is_ok()
    }

    /// The terms among `terms` that occur in `doc`.
    pub(crate) fn matched(&self, terms: &[u32], doc: u32) -> Vec<String> {
        terms
            .iter()
            .filter(|&&t| {
                self.postings[t as usize]
                    .binary_search_by_key(&doc, |&(d, _)| d)
                    .is_ok()
            })
            .map(|&t| self.terms[t as usize].clone())
            .collect()
    }
}
