//! Recall at k, per question and averaged over groups of questions.

use serde::Serialize;

use super::data::Category;
use super::run::QuestionResult;

/// The share of `evidence` found among the first `k` of `ranked` (0 when there is no
/// evidence).
pub fn recall_at(ranked: &[String], evidence: &[String], k: usize) -> f64 {
    if evidence.is_empty() {
        return 0.0;
    }
    let top = &ranked[..k.min(ranked.len())];
    let found = evidence.iter().filter(|e| top.contains(e)).count();
    found as f64 / evidence.len() as f64
}

/// Whether every evidence turn is among the first `k`.
pub fn all_at(ranked: &[String], evidence: &[String], k: usize) -> bool {
    recall_at(ranked, evidence, k) >= 1.0
}

/// One method's averages over a group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Recall {
    pub r5: f64,
    pub r10: f64,
    /// Share of questions with every evidence turn in the top 5 / top 10.
    pub all5: f64,
    pub all10: f64,
}

impl Recall {
    fn of<'a>(rankings: impl Iterator<Item = (&'a [String], &'a [String])>) -> Recall {
        let (mut sum, mut n) = (Recall::default(), 0usize);
        for (ranked, evidence) in rankings {
            n += 1;
            sum.r5 += recall_at(ranked, evidence, 5);
            sum.r10 += recall_at(ranked, evidence, 10);
            sum.all5 += f64::from(u8::from(all_at(ranked, evidence, 5)));
            sum.all10 += f64::from(u8::from(all_at(ranked, evidence, 10)));
        }
        let n = n.max(1) as f64;
        Recall {
            r5: sum.r5 / n,
            r10: sum.r10 / n,
            all5: sum.all5 / n,
            all10: sum.all10 / n,
        }
    }
}

/// Both methods over one group of questions.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub name: String,
    pub questions: usize,
    pub metaclaw: Recall,
    pub bm25: Recall,
    /// MetaClaw's recall over the baseline's (None when the baseline's is 0).
    pub ratio_r5: Option<f64>,
    pub ratio_r10: Option<f64>,
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

pub fn group(name: &str, results: &[&QuestionResult]) -> Group {
    let metaclaw = Recall::of(
        results
            .iter()
            .map(|r| (r.metaclaw.as_slice(), r.evidence.as_slice())),
    );
    let bm25 = Recall::of(
        results
            .iter()
            .map(|r| (r.bm25.as_slice(), r.evidence.as_slice())),
    );
    Group {
        name: name.to_owned(),
        questions: results.len(),
        ratio_r5: ratio(metaclaw.r5, bm25.r5),
        ratio_r10: ratio(metaclaw.r10, bm25.r10),
        metaclaw,
        bm25,
    }
}

/// The groups reported: all questions, each category, each question language, the
/// cross-lingual ones, and each conversation. Empty groups are left out.
pub fn groups(results: &[QuestionResult]) -> Vec<Group> {
    let pick = |f: &dyn Fn(&QuestionResult) -> bool| -> Vec<&QuestionResult> {
        results.iter().filter(|r| f(r)).collect()
    };
    let mut out = vec![group("overall", &pick(&|_| true))];
    for c in Category::ALL {
        out.push(group(c.as_str(), &pick(&|r| r.category == c)));
    }
    let mut langs: Vec<&str> = results.iter().map(|r| r.lang.as_str()).collect();
    langs.sort_unstable();
    langs.dedup();
    for lang in langs {
        out.push(group(&format!("lang {lang}"), &pick(&|r| r.lang == lang)));
    }
    out.push(group("cross-lingual", &pick(&|r| r.cross_lingual)));
    let mut convs: Vec<&str> = results.iter().map(|r| r.conversation.as_str()).collect();
    convs.dedup();
    for conv in convs {
        out.push(group(conv, &pick(&|r| r.conversation == conv)));
    }
    out.retain(|g| g.questions > 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn recall_is_the_share_of_evidence_in_the_top_k() {
        let ranked = ids(&["a", "b", "c", "d", "e", "f"]);
        assert_eq!(recall_at(&ranked, &ids(&["b"]), 5), 1.0);
        assert_eq!(recall_at(&ranked, &ids(&["b", "f"]), 5), 0.5);
        assert_eq!(recall_at(&ranked, &ids(&["b", "f"]), 10), 1.0);
        assert_eq!(recall_at(&ranked, &ids(&["z"]), 10), 0.0);
        assert_eq!(recall_at(&[], &ids(&["a"]), 10), 0.0);
        assert!(!all_at(&ranked, &ids(&["a", "f"]), 5));
        assert!(all_at(&ranked, &ids(&["a", "f"]), 6));
    }

    #[test]
    fn groups_average_over_questions() {
        let result =
            |id: &str, cat, metaclaw: &[&str], bm25: &[&str], evidence: &[&str]| QuestionResult {
                conversation: "c1".to_owned(),
                id: id.to_owned(),
                category: cat,
                lang: "en".to_owned(),
                cross_lingual: false,
                question: String::new(),
                evidence: ids(evidence),
                metaclaw: ids(metaclaw),
                bm25: ids(bm25),
                metaclaw_deep_rank: vec![],
                bm25_rank: vec![],
                metaclaw_top_reason: None,
            };
        let results = vec![
            result("q1", Category::Single, &["a"], &["b", "a"], &["a"]),
            result("q2", Category::Multi, &["x", "b"], &["a"], &["a", "b"]),
        ];
        let all = groups(&results);
        let overall = &all[0];
        assert_eq!(overall.questions, 2);
        assert!((overall.metaclaw.r10 - 0.75).abs() < 1e-9);
        assert!((overall.bm25.r10 - 0.75).abs() < 1e-9);
        assert!((overall.metaclaw.all10 - 0.5).abs() < 1e-9);
        assert_eq!(overall.ratio_r10, Some(1.0));
        let multi = all.iter().find(|g| g.name == "multi").unwrap();
        assert_eq!(multi.metaclaw.all10, 0.0);
        assert!(
            all.iter()
                .all(|g| g.name != "time" && g.name != "cross-lingual")
        );
    }
}
