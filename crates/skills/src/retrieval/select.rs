//! Turning BM25F scores into the few skills worth injecting.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::bm25::Index;
use super::lessons;
use crate::Skill;

/// Bounds on what one retrieval may return.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievalConfig {
    /// Scored skills returned at most (pinned `always` skills are not counted).
    pub top_k: usize,
    /// Scored skills returned at most from any one category, so one topic cannot fill the
    /// whole block.
    pub task_specific_top_k: usize,
    /// Minimum normalised score (see [`Index`]: 1.0 ≈ one rare term matched at full
    /// strength). Below it a hit is noise, typically one shared word in a body. 0.7 and
    /// `min_relative` 0.6 were measured on `tests/fixtures/queries.json` against the
    /// built-in bank: lower values let greetings and one-word overlaps through.
    pub min_score: f32,
    /// Hits below this fraction of the best hit's score are dropped: a clear winner should
    /// not bring weak neighbours along.
    pub min_relative: f32,
    /// Evolved skills (the user's own lessons, see `lessons`) returned at most, besides and
    /// before the `top_k` hits of the whole bank.
    pub lesson_top_k: usize,
    /// Minimum score in the lessons lane, on the same scale as `min_score` but with idf
    /// counted among the lessons. 0.5: one distinctive word in a lesson's name, tags or
    /// description (≈0.6–0.85) passes; a word the lesson only mentions in its body, or
    /// one most lessons share, does not.
    pub lesson_min_score: f32,
    /// Tokens the user's learned one-sentence rules may take in every turn's block (see
    /// `standing`); 0 leaves them to relevance like any lesson.
    pub standing_tokens: usize,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            top_k: 3,
            task_specific_top_k: 2,
            min_score: 0.7,
            min_relative: 0.6,
            lesson_top_k: 3,
            lesson_min_score: 0.5,
            standing_tokens: 300,
        }
    }
}

/// One retrieved skill.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub name: String,
    /// Normalised BM25F score; 0 for pinned skills.
    pub score: f32,
    /// Query terms (stemmed) found in the skill, for `skills search` explanations.
    pub matched_terms: Vec<String>,
    /// Returned because the skill is marked `always`, not because it matched.
    pub pinned: bool,
    /// Returned because it is one of the user's standing rules (see `standing`), shown in
    /// every turn while they fit.
    pub standing: bool,
    /// Cosine similarity to the query, when a semantic index ranked it (see `fuse`).
    pub cosine: Option<f32>,
}

#[derive(Debug, Clone, Default)]
pub struct Retriever {
    pub index: Index,
    pub config: RetrievalConfig,
    /// Evolved skills only, for the lessons lane.
    lessons: Index,
    /// Ids in `lessons` of the words that never select a lesson ([`lessons::GENERIC`]).
    generic: Vec<u32>,
    /// Ids in `index` of the words that alone never select a built-in (see `everyday`).
    everyday: Vec<u32>,
    /// Doc ids in `index` of the standing rules, by name (see `standing`).
    standing: Vec<u32>,
}

impl Retriever {
    pub fn new(skills: &[Skill], config: RetrievalConfig) -> Self {
        let lessons = lessons::index(skills);
        let mut generic = lessons.ids_of(&lessons::generic_stems());
        generic.sort_unstable();
        let index = Index::build(skills);
        let mut everyday = index.ids_of(&super::everyday::everyday_stems());
        everyday.sort_unstable();
        let standing = super::standing::standing(skills, &index.docs, config.standing_tokens);
        Self {
            index,
            config,
            lessons,
            generic,
            everyday,
            standing,
        }
    }

    /// The lessons for `query`, best first: at most `lesson_top_k` evolved skills scoring
    /// at least `lesson_min_score` in their own index, on the query's topic words.
    pub fn lessons(&self, query: &str) -> Vec<Hit> {
        let c = &self.config;
        if self.lessons.is_empty() || c.lesson_top_k == 0 {
            return Vec::new();
        }
        let mut terms = self.lessons.query_terms(query);
        terms.retain(|t| self.generic.binary_search(t).is_err());
        let mut scores = vec![0f32; self.lessons.len()];
        let mut touched = Vec::new();
        self.lessons.accumulate(&terms, &mut scores, &mut touched);
        let best = touched
            .iter()
            .map(|&d| scores[d as usize])
            .fold(0.0, f32::max);
        let floor = c.lesson_min_score.max(c.min_relative * best);
        let mut ranked: Vec<(u32, f32)> = touched
            .into_iter()
            .map(|d| (d, scores[d as usize]))
            .filter(|&(_, s)| s >= floor)
            .filter(|&(d, _)| !self.stands(&self.lessons.docs[d as usize].name))
            .collect();
        let docs = &self.lessons.docs;
        ranked.sort_unstable_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| docs[a.0 as usize].name.cmp(&docs[b.0 as usize].name))
        });
        ranked.truncate(c.lesson_top_k);
        ranked
            .into_iter()
            .map(|(doc, score)| Hit {
                name: docs[doc as usize].name.clone(),
                score,
                matched_terms: self.lessons.matched(&terms, doc),
                pinned: false,
                standing: false,
                cosine: None,
            })
            .collect()
    }

    /// Whether `name` is one of the standing rules, shown in every turn anyway.
    fn stands(&self, name: &str) -> bool {
        self.standing
            .iter()
            .any(|&d| self.index.docs[d as usize].name == name)
    }

    /// The skills to inject for `query`: pinned skills first, then the standing rules (see
    /// `standing`), then the lessons that fit (see [`Self::lessons`]), then at most `top_k`
    /// scored hits of the whole bank that pass both thresholds and the per-category cap,
    /// best first.
    pub fn retrieve(&self, query: &str) -> Vec<Hit> {
        let c = &self.config;
        let (terms, scored) = self.scored(query, |best| c.min_score.max(c.min_relative * best));
        let lessons = self.lessons(query);
        self.select(
            self.best_first(scored),
            lessons,
            |r| r.0,
            |(doc, score)| self.hit(&terms, doc, score),
        )
    }

    /// Pinned skills first, then the standing rules, then `lessons`, then entries of
    /// `ranked` (best first, never pinned) up to `top_k` and within the per-category cap,
    /// skipping skills already taken. Shared by lexical and fused retrieval so both bound
    /// the block the same way; `hit` runs only for the entries taken.
    pub(super) fn select<T>(
        &self,
        ranked: impl IntoIterator<Item = T>,
        lessons: Vec<Hit>,
        doc: impl Fn(&T) -> u32,
        hit: impl Fn(T) -> Hit,
    ) -> Vec<Hit> {
        let mut hits = self.pinned();
        hits.extend(self.standing.iter().map(|&doc| Hit {
            standing: true,
            ..self.hit(&[], doc, 0.0)
        }));
        for lesson in lessons {
            if !hits.iter().any(|h| h.name == lesson.name) {
                hits.push(lesson);
            }
        }
        // Categories of the hits taken so far; `top_k` is small, so a scan beats a map.
        let mut taken: Vec<&str> = Vec::with_capacity(self.config.top_k);
        for entry in ranked {
            if taken.len() == self.config.top_k {
                break;
            }
            let name = &self.index.docs[doc(&entry) as usize].name;
            if hits.iter().any(|h| &h.name == name) {
                continue;
            }
            let category = self.index.docs[doc(&entry) as usize].category.as_str();
            if taken.iter().filter(|&&c| c == category).count() < self.config.task_specific_top_k {
                taken.push(category);
                hits.push(hit(entry));
            }
        }
        hits
    }

    /// Every skill sharing a term with `query`, best first, ignoring thresholds and caps:
    /// what `metaclaw skills search` shows.
    pub fn rank(&self, query: &str) -> Vec<Hit> {
        let (terms, ranked) = self.ranked(query, |_| 0.0);
        ranked
            .into_iter()
            .map(|(doc, score)| self.hit(&terms, doc, score))
            .collect()
    }

    fn pinned(&self) -> Vec<Hit> {
        let mut hits: Vec<Hit> = self
            .index
            .docs
            .iter()
            .filter(|d| d.always)
            .map(|d| Hit {
                name: d.name.clone(),
                score: 0.0,
                matched_terms: Vec::new(),
                pinned: true,
                standing: false,
                cosine: None,
            })
            .collect();
        hits.sort_by(|a, b| a.name.cmp(&b.name));
        hits
    }

    /// Query term ids and the non-pinned docs scoring at least `floor(best score)`, by
    /// descending score, ties by name. Filtering before sorting keeps large banks cheap.
    pub(super) fn ranked(
        &self,
        query: &str,
        floor: impl Fn(f32) -> f32,
    ) -> (Vec<u32>, Vec<(u32, f32)>) {
        let (terms, mut ranked) = self.scored(query, floor);
        let docs = &self.index.docs;
        ranked.sort_unstable_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| docs[a.0 as usize].name.cmp(&docs[b.0 as usize].name))
        });
        (terms, ranked)
    }

    /// `scored` entries best first, ties by name, ordered only as far as they are read:
    /// `select` usually reads `top_k` of them, and sorting every match of a large bank
    /// (thousands of skills sharing a common word) cost more than the rest of a turn.
    fn best_first(&self, scored: Vec<(u32, f32)>) -> impl Iterator<Item = (u32, f32)> + '_ {
        let docs = &self.index.docs;
        let mut heap: BinaryHeap<Best<'_>> = scored
            .into_iter()
            .map(|(doc, score)| Best {
                doc,
                score,
                name: &docs[doc as usize].name,
            })
            .collect();
        std::iter::from_fn(move || heap.pop().map(|b| (b.doc, b.score)))
    }

    /// Query term ids and the non-pinned docs scoring at least `floor(best score)`, in no
    /// particular order.
    fn scored(&self, query: &str, floor: impl Fn(f32) -> f32) -> (Vec<u32>, Vec<(u32, f32)>) {
        let terms = self.index.query_terms(query);
        if terms.is_empty() {
            return (terms, Vec::new());
        }
        let mut scores = vec![0f32; self.index.len()];
        let mut touched = Vec::new();
        self.index.accumulate(&terms, &mut scores, &mut touched);
        let docs = &self.index.docs;
        touched.retain(|&d| !docs[d as usize].always && self.topical(&terms, d));
        let best = touched
            .iter()
            .map(|&d| scores[d as usize])
            .fold(0.0, f32::max);
        let floor = floor(best);
        let scored = touched
            .into_iter()
            .map(|d| (d, scores[d as usize]))
            .filter(|&(_, s)| s > 0.0 && s >= floor)
            .collect();
        (terms, scored)
    }

    /// False for a built-in whose only matched words are everyday ones (see `everyday`)
    /// none of which is in its name.
    fn topical(&self, terms: &[u32], doc: u32) -> bool {
        let d = &self.index.docs[doc as usize];
        if !d.builtin {
            return true;
        }
        terms.iter().any(|&t| {
            self.index.contains(t, doc)
                && (self.everyday.binary_search(&t).is_err()
                    || d.name_terms.binary_search(&t).is_ok())
        })
    }

    pub(super) fn hit(&self, terms: &[u32], doc: u32, score: f32) -> Hit {
        Hit {
            name: self.index.docs[doc as usize].name.clone(),
            score,
            matched_terms: self.index.matched(terms, doc),
            pinned: false,
            standing: false,
            cosine: None,
        }
    }
}

/// A scored skill in the heap: the higher score first, then the name first in order.
struct Best<'a> {
    doc: u32,
    score: f32,
    name: &'a str,
}

impl Ord for Best<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.name.cmp(self.name))
    }
}

impl PartialOrd for Best<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Best<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Best<'_> {}
