//! The benchmark's output: a Markdown table, the misses for people, JSON for machines.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::data::{Category, Conversation};
use super::metrics::{Group, groups};
use super::run::{DEEP_LIMIT, QuestionResult};

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The semantic source (`none`: lexical search only).
    pub vectors: String,
    pub conversations: usize,
    pub turns: usize,
    pub questions: usize,
    pub seconds: f64,
    pub groups: Vec<Group>,
    pub results: Vec<QuestionResult>,
}

impl Summary {
    pub fn new(
        vectors: &str,
        convs: &[Conversation],
        results: Vec<QuestionResult>,
        seconds: f64,
    ) -> Summary {
        Summary {
            vectors: vectors.to_owned(),
            conversations: convs.len(),
            turns: convs.iter().map(|c| c.turns().count()).sum(),
            questions: results.len(),
            seconds,
            groups: groups(&results),
            results,
        }
    }

    pub fn overall(&self) -> Option<&Group> {
        self.groups.iter().find(|g| g.name == "overall")
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}

fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), |r| format!("{r:.2}"))
}

/// The table: recall@5 and @10 of both methods per group, and their ratio.
pub fn markdown(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Recall over {} conversations ({} turns, {} questions); semantic vectors: {}; {:.1} s\n",
        s.conversations, s.turns, s.questions, s.vectors, s.seconds
    );
    let _ = writeln!(
        out,
        "| group | n | MetaClaw R@5 | BM25 R@5 | MetaClaw R@10 | BM25 R@10 | ratio R@5 | ratio R@10 |"
    );
    let _ = writeln!(out, "|---|--:|--:|--:|--:|--:|--:|--:|");
    for g in &s.groups {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            g.name,
            g.questions,
            pct(g.metaclaw.r5),
            pct(g.bm25.r5),
            pct(g.metaclaw.r10),
            pct(g.bm25.r10),
            ratio(g.ratio_r5),
            ratio(g.ratio_r10)
        );
    }
    if let Some(m) = s.groups.iter().find(|g| g.name == Category::Multi.as_str()) {
        let _ = writeln!(
            out,
            "\nmulti, all evidence found: MetaClaw {}% in top 5, {}% in top 10; BM25 {}% in top 5, {}% in top 10",
            pct(m.metaclaw.all5),
            pct(m.metaclaw.all10),
            pct(m.bm25.all5),
            pct(m.bm25.all10)
        );
    }
    let hits: Vec<usize> = s.results.iter().map(|r| r.metaclaw.len()).collect();
    let short = hits.iter().filter(|n| **n < 10).count();
    let empty = hits.iter().filter(|n| **n == 0).count();
    let _ = writeln!(
        out,
        "MetaClaw returned fewer than 10 hits for {short} questions, none for {empty}."
    );
    out
}

/// Lexical and hybrid search side by side, with the baseline (the same in both runs).
pub fn hybrid_markdown(lexical: &Summary, hybrid: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Lexical against hybrid (semantic vectors: {}; {:.1} s)\n",
        hybrid.vectors, hybrid.seconds
    );
    let _ = writeln!(
        out,
        "| group | n | lexical R@5 | hybrid R@5 | BM25 R@5 | lexical R@10 | hybrid R@10 | BM25 R@10 |"
    );
    let _ = writeln!(out, "|---|--:|--:|--:|--:|--:|--:|--:|");
    for l in &lexical.groups {
        let Some(h) = hybrid.groups.iter().find(|h| h.name == l.name) else {
            continue;
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            l.name,
            l.questions,
            pct(l.metaclaw.r5),
            pct(h.metaclaw.r5),
            pct(l.bm25.r5),
            pct(l.metaclaw.r10),
            pct(h.metaclaw.r10),
            pct(l.bm25.r10)
        );
    }
    out
}

fn excerpt(text: &str, chars: usize) -> String {
    let flat = text.replace('\n', " ");
    if flat.chars().count() <= chars {
        return flat;
    }
    let cut: String = flat.chars().take(chars).collect();
    format!("{cut}…")
}

fn rank(r: Option<usize>, beyond: &str) -> String {
    r.map_or_else(|| beyond.to_owned(), |r| format!("#{r}"))
}

/// Every question where MetaClaw missed some evidence in its top 10: the question, each
/// missed turn with where each method ranked it, and what MetaClaw put first.
pub fn misses(s: &Summary, convs: &[Conversation]) -> String {
    let texts: HashMap<&str, String> = convs
        .iter()
        .flat_map(|c| c.turns().map(|(_, t)| (t.id.as_str(), t.text())))
        .collect();
    let text = |id: &str| texts.get(id).map(|t| excerpt(t, 110)).unwrap_or_default();
    let mut out = String::new();
    let missed: Vec<&QuestionResult> = s
        .results
        .iter()
        .filter(|r| r.evidence.iter().any(|e| !r.metaclaw.contains(e)))
        .collect();
    let _ = writeln!(out, "MetaClaw misses ({} questions):\n", missed.len());
    for r in missed {
        let bm25_found = r.evidence.iter().all(|e| r.bm25.contains(e));
        let _ = writeln!(
            out,
            "{} [{}{}{}] {}",
            r.id,
            r.category.as_str(),
            if r.cross_lingual {
                ", cross-lingual"
            } else {
                ""
            },
            if bm25_found { ", BM25 found all" } else { "" },
            r.question
        );
        for (i, e) in r.evidence.iter().enumerate() {
            if r.metaclaw.contains(e) {
                continue;
            }
            let deep = r.metaclaw_deep_rank.get(i).copied().flatten();
            let bm = r.bm25_rank.get(i).copied().flatten();
            let _ = writeln!(
                out,
                "  missed {e} (MetaClaw {}, BM25 {}): {}",
                rank(deep, &format!("not in {DEEP_LIMIT}")),
                rank(bm, "no match"),
                text(e)
            );
        }
        match r.metaclaw.first() {
            Some(top) => {
                let _ = writeln!(out, "  MetaClaw #1 {top}: {}", text(top));
                if let Some(reason) = &r.metaclaw_top_reason {
                    let _ = writeln!(out, "    ({})", excerpt(reason, 140));
                }
            }
            None => {
                let _ = writeln!(out, "  MetaClaw returned nothing");
            }
        }
        let _ = writeln!(out);
    }
    out
}
