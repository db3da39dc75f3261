//! Selection when a semantic index is in force: cosine similarity alone (`embedding`), or
//! cosine and BM25F ranks fused (`hybrid`). Pure: the caller computes the query's cosine to
//! each skill; the same pinned-first, `top_k` and per-category rules as lexical retrieval
//! then bound the result (see [`Retriever::select`]).

use std::collections::HashMap;

use super::select::{Hit, Retriever};

/// Reciprocal rank fusion constant (Cormack et al., 2009). 60 flattens the head of each
/// list, so a skill both sides rank well beats one that only a single side ranks first, and
/// needs no calibration between BM25 scores and cosines, which live on unrelated scales.
pub const RRF_K: f32 = 60.0;

/// How the semantic side decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fusion {
    /// Cosine similarity alone.
    Embedding,
    /// Lexical and cosine ranks fused by reciprocal rank fusion.
    Hybrid,
}

/// One candidate: doc id, ordering key, lexical score (0 if none), cosine.
type Candidate = (u32, f32, f32, Option<f32>);

impl Retriever {
    /// The skills to inject for `query`, given its cosine similarity to each skill in
    /// `similar`, by doc id (see [`Retriever::doc_ids`]; any order; unknown ids and pinned
    /// skills are ignored).
    ///
    /// `Embedding`: skills with cosine ≥ `min_similarity`, best first. `Hybrid`: skills that
    /// pass the lexical thresholds or `min_similarity`, ordered by RRF over the two lists of
    /// accepted skills, so a skill on both comes before a skill on one.
    /// Ties go by name. Then pinned skills first, `top_k` and the per-category cap.
    pub fn retrieve_fused(
        &self,
        query: &str,
        similar: &[(u32, f32)],
        fusion: Fusion,
        min_similarity: f32,
    ) -> Vec<Hit> {
        let (terms, ranked) = self.fused(query, similar, fusion, Some(min_similarity));
        let lessons = self.lessons(query);
        self.select(ranked, lessons, |c| c.0, |c| self.fused_hit(&terms, c))
    }

    /// Every skill either side ranks, in `fusion` order, ignoring thresholds and caps: what
    /// `skills search` shows.
    pub fn rank_fused(&self, query: &str, similar: &[(u32, f32)], fusion: Fusion) -> Vec<Hit> {
        let (terms, ranked) = self.fused(query, similar, fusion, None);
        ranked
            .into_iter()
            .map(|c| self.fused_hit(&terms, c))
            .collect()
    }

    /// Query terms and the candidates, best first. `min_similarity: None` keeps everything.
    fn fused(
        &self,
        query: &str,
        similar: &[(u32, f32)],
        fusion: Fusion,
        min_similarity: Option<f32>,
    ) -> (Vec<u32>, Vec<Candidate>) {
        let docs = &self.index.docs;
        // Per doc: (lexical rank, score), (semantic rank, cosine); ranks are 1-based.
        let mut lexical: Vec<Option<(usize, f32)>> = vec![None; docs.len()];
        let mut semantic: Vec<Option<(usize, f32)>> = vec![None; docs.len()];

        // With thresholds, each side ranks only the skills it accepts: a weak lexical match
        // or a low cosine must not lift a skill through the other side's rank.
        let c = &self.config;
        let (terms, ranked) = match min_similarity {
            Some(_) => self.ranked(query, |best| c.min_score.max(c.min_relative * best)),
            None => self.ranked(query, |_| 0.0),
        };
        for (rank, &(doc, score)) in ranked.iter().enumerate() {
            lexical[doc as usize] = Some((rank + 1, score));
        }

        let mut cosines: Vec<Option<f32>> = vec![None; docs.len()];
        for &(doc, cosine) in similar {
            let ranks = docs.get(doc as usize).is_some_and(|d| !d.always);
            if ranks && cosine.is_finite() {
                cosines[doc as usize] = Some(cosine);
            }
        }
        let mut by_cosine: Vec<(usize, f32)> = cosines
            .iter()
            .enumerate()
            .filter_map(|(d, c)| c.map(|c| (d, c)))
            .collect();
        if let Some(m) = min_similarity {
            by_cosine.retain(|&(_, c)| c >= m);
        }
        by_cosine.sort_unstable_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| docs[a.0].name.cmp(&docs[b.0].name))
        });
        for (rank, &(doc, cosine)) in by_cosine.iter().enumerate() {
            semantic[doc] = Some((rank + 1, cosine));
        }

        let rrf = |rank: usize| 1.0 / (RRF_K + rank as f32);
        let mut out: Vec<Candidate> = Vec::new();
        for doc in 0..docs.len() {
            let (lex, sem) = (lexical[doc], semantic[doc]);
            let key = match (fusion, lex, sem) {
                (Fusion::Embedding, _, Some((_, cosine))) => cosine,
                (Fusion::Hybrid, Some(_), _) | (Fusion::Hybrid, _, Some(_)) => {
                    lex.map_or(0.0, |l| rrf(l.0)) + sem.map_or(0.0, |s| rrf(s.0))
                }
                _ => continue,
            };
            // The cosine is reported even when below the floor, for `skills search`.
            out.push((doc as u32, key, lex.map_or(0.0, |l| l.1), cosines[doc]));
        }
        out.sort_unstable_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| docs[a.0 as usize].name.cmp(&docs[b.0 as usize].name))
        });
        (terms, out)
    }

    /// Each name's doc id here, `None` for a name not in this library and for an always-on
    /// skill (which never ranks). A semantic index keeps these beside its vectors, so a
    /// turn's fusion looks nothing up by name: building that map for 10,000 skills was a
    /// tenth of a library turn's time.
    pub fn doc_ids<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<Option<u32>> {
        let by_name: HashMap<&str, u32> = self
            .index
            .docs
            .iter()
            .zip(0..)
            .filter(|(d, _)| !d.always)
            .map(|(d, i)| (d.name.as_str(), i))
            .collect();
        names.into_iter().map(|n| by_name.get(n).copied()).collect()
    }

    fn fused_hit(&self, terms: &[u32], (doc, _, score, cosine): Candidate) -> Hit {
        let mut hit = self.hit(terms, doc, score);
        hit.cosine = cosine;
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::RetrievalConfig;
    use crate::{Skill, parse_skill};

    fn skill(name: &str, category: &str, tags: &str, always: bool) -> Skill {
        let text = format!(
            "---\nname: {name}\ndescription: Use when working on {tags}.\ncategory: {category}\ntags: [{tags}]\nalways: {always}\n---\n# {name}\n\nSteps for {tags}.\n"
        );
        parse_skill(&text, None).unwrap().0
    }

    fn bank() -> Retriever {
        let skills = vec![
            skill("docker-builds", "coding", "docker, container", false),
            skill("pytest-debugging", "debugging", "pytest, failing", false),
            skill("sql-tuning", "data_analysis", "sql, index", false),
            skill("trip-planning", "productivity", "travel, itinerary", false),
            skill("meeting-notes", "productivity", "meeting, notes", false),
            skill("agenda-writing", "productivity", "agenda, meeting", false),
            skill("be-kind", "general", "kindness", true),
        ];
        Retriever::new(&skills, RetrievalConfig::default())
    }

    /// `similar` by doc id, as a semantic index hands it over.
    fn by_doc(r: &Retriever, similar: &[(&str, f32)]) -> Vec<(u32, f32)> {
        let ids = r.doc_ids(similar.iter().map(|(n, _)| *n));
        ids.into_iter()
            .zip(similar)
            .filter_map(|(id, (_, c))| Some((id?, *c)))
            .collect()
    }

    fn names(hits: &[Hit]) -> Vec<&str> {
        hits.iter().map(|h| h.name.as_str()).collect()
    }

    #[test]
    fn embedding_keeps_cosines_above_the_floor_best_first_after_pins() {
        let r = bank();
        let similar = [
            ("sql-tuning", 0.2),
            ("trip-planning", 0.81),
            ("docker-builds", 0.55),
            ("be-kind", 0.99),
        ];
        let hits = r.retrieve_fused("anything", &by_doc(&r, &similar), Fusion::Embedding, 0.3);
        assert_eq!(names(&hits), ["be-kind", "trip-planning", "docker-builds"]);
        assert!(hits[0].pinned && hits[0].cosine.is_none());
        assert_eq!(hits[1].cosine, Some(0.81));
        let none = r.retrieve_fused("anything", &by_doc(&r, &similar), Fusion::Embedding, 0.9);
        assert_eq!(
            names(&none),
            ["be-kind"],
            "only the pin clears a high floor"
        );
    }

    #[test]
    fn ties_break_by_name_and_the_caps_apply() {
        let r = RetrieverCaps::new(1, 1);
        let similar = [
            ("meeting-notes", 0.7),
            ("agenda-writing", 0.7),
            ("trip-planning", 0.7),
        ];
        let hits =
            r.0.retrieve_fused("x", &by_doc(&r.0, &similar), Fusion::Embedding, 0.3);
        assert_eq!(names(&hits), ["be-kind", "agenda-writing"]);

        let r = RetrieverCaps::new(3, 2);
        let hits =
            r.0.retrieve_fused("x", &by_doc(&r.0, &similar), Fusion::Embedding, 0.3);
        assert_eq!(
            names(&hits),
            ["be-kind", "agenda-writing", "meeting-notes"],
            "two per category, however many clear the floor"
        );
    }

    struct RetrieverCaps(Retriever);

    impl RetrieverCaps {
        fn new(top_k: usize, per_category: usize) -> Self {
            let mut r = bank();
            r.config.top_k = top_k;
            r.config.task_specific_top_k = per_category;
            RetrieverCaps(r)
        }
    }

    #[test]
    fn hybrid_fuses_ranks_and_admits_either_sides_pass() {
        let r = bank();
        // Lexically only docker matches; semantically sql is closest, docker second.
        let similar = [
            ("sql-tuning", 0.6),
            ("docker-builds", 0.5),
            ("trip-planning", 0.1),
        ];
        let hits = r.retrieve_fused(
            "docker container",
            &by_doc(&r, &similar),
            Fusion::Hybrid,
            0.3,
        );
        assert_eq!(names(&hits), ["be-kind", "docker-builds", "sql-tuning"]);
        assert!(hits[1].score > 0.0 && !hits[1].matched_terms.is_empty());
        assert_eq!(hits[1].cosine, Some(0.5));
        assert_eq!(
            hits[2].score, 0.0,
            "admitted by its cosine alone, without a lexical match"
        );

        // A lexical pass is enough even when the cosine is low.
        let low = [("docker-builds", 0.05)];
        let hits = r.retrieve_fused("docker container", &by_doc(&r, &low), Fusion::Hybrid, 0.3);
        assert_eq!(names(&hits), ["be-kind", "docker-builds"]);
    }

    #[test]
    fn hybrid_ranks_agreement_above_a_single_sides_first_place() {
        let r = bank();
        // sql is first semantically only; pytest is first lexically and second semantically.
        let similar = [
            ("sql-tuning", 0.9),
            ("pytest-debugging", 0.8),
            ("docker-builds", 0.1),
        ];
        let ranked = r.rank_fused(
            "docker pytest failing",
            &by_doc(&r, &similar),
            Fusion::Hybrid,
        );
        let first = &ranked[0];
        assert_eq!(first.name, "pytest-debugging", "{ranked:?}");
        assert!(ranked.iter().all(|h| !h.pinned));
        assert_eq!(ranked.len(), 3, "thresholds are ignored when ranking");
    }

    #[test]
    fn hybrid_ranks_only_what_each_side_accepts() {
        let r = bank();
        // "meeting notes" clears the lexical thresholds for meeting-notes; agenda-writing is
        // semantically close. sql-tuning is the next closest but below the floor,
        // so its rank must not lift it, nor push the others down.
        let similar = [
            ("sql-tuning", 0.29),
            ("agenda-writing", 0.5),
            ("meeting-notes", 0.2),
        ];
        let hits = r.retrieve_fused("meeting notes", &by_doc(&r, &similar), Fusion::Hybrid, 0.3);
        assert_eq!(names(&hits), ["be-kind", "agenda-writing", "meeting-notes"]);
        assert_eq!(hits[2].cosine, Some(0.2), "reported even below the floor");
    }

    #[test]
    fn unknown_names_ids_and_nan_cosines_are_ignored() {
        let r = bank();
        assert_eq!(
            r.doc_ids(["gone", "be-kind", "sql-tuning"]),
            [None, None, Some(2)],
            "a name not here, and an always-on skill, have no id to rank by"
        );
        let similar = [(2, f32::NAN), (99, 0.9), (6, 0.9)];
        let hits = r.retrieve_fused("hello", &similar, Fusion::Hybrid, 0.3);
        assert_eq!(names(&hits), ["be-kind"]);
    }
}
