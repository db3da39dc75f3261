//! The baseline: Okapi BM25 (k1 = 1.2, b = 0.75) over the same texts as the memory units.
//!
//! Words are lowercased runs of letters and digits, kept whole (no stemming, no stop
//! words); runs of CJK characters, which have no spaces, become character bigrams (a lone
//! character stays a unigram), the usual baseline for Chinese.

use std::collections::HashMap;

use metaclaw_memory::text::is_cjk;

pub const K1: f32 = 1.2;
pub const B: f32 = 0.75;

/// The baseline's tokens of `text`, in order.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_cjk(c) {
            flush_word(&mut word, &mut out);
            cjk.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut cjk, &mut out);
            word.extend(c.to_lowercase());
        } else {
            flush_word(&mut word, &mut out);
            flush_cjk(&mut cjk, &mut out);
        }
    }
    flush_word(&mut word, &mut out);
    flush_cjk(&mut cjk, &mut out);
    out
}

fn flush_word(word: &mut String, out: &mut Vec<String>) {
    if !word.is_empty() {
        out.push(std::mem::take(word));
    }
}

fn flush_cjk(run: &mut Vec<char>, out: &mut Vec<String>) {
    match run.len() {
        0 => {}
        1 => out.push(run.iter().collect()),
        _ => out.extend(run.windows(2).map(|w| w.iter().collect::<String>())),
    }
    run.clear();
}

/// An index of documents, searched by BM25.
#[derive(Debug, Default)]
pub struct Bm25 {
    /// Term frequencies per document.
    docs: Vec<HashMap<String, u32>>,
    lens: Vec<f32>,
    avg_len: f32,
    /// Documents holding each term.
    df: HashMap<String, u32>,
}

impl Bm25 {
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Bm25 {
        let mut index = Bm25::default();
        for text in texts {
            let toks = tokens(text);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in &toks {
                *tf.entry(t.clone()).or_default() += 1;
            }
            for t in tf.keys() {
                *index.df.entry(t.clone()).or_default() += 1;
            }
            index.lens.push(toks.len() as f32);
            index.docs.push(tf);
        }
        let n = index.docs.len().max(1) as f32;
        index.avg_len = index.lens.iter().sum::<f32>() / n;
        index
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Always positive (the Lucene form), so very common terms weigh little, never less
    /// than nothing.
    fn idf(&self, term: &str) -> f32 {
        let n = self.docs.len() as f32;
        let df = self.df.get(term).copied().unwrap_or(0) as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Every document scoring above zero for `query`, best first (ties by position), as
    /// (document index, score). A term repeated in the query counts each time.
    pub fn rank(&self, query: &str) -> Vec<(usize, f32)> {
        let terms = tokens(query);
        let weights: Vec<(&str, f32)> = terms
            .iter()
            .filter(|t| self.df.contains_key(t.as_str()))
            .map(|t| (t.as_str(), self.idf(t)))
            .collect();
        let avg = self.avg_len.max(f32::MIN_POSITIVE);
        let mut scored: Vec<(usize, f32)> = self
            .docs
            .iter()
            .zip(&self.lens)
            .enumerate()
            .filter_map(|(i, (tf, len))| {
                let norm = K1 * (1.0 - B + B * len / avg);
                let score: f32 = weights
                    .iter()
                    .filter_map(|(t, idf)| {
                        let f = *tf.get(*t)? as f32;
                        Some(idf * f * (K1 + 1.0) / (f + norm))
                    })
                    .sum();
                (score > 0.0).then_some((i, score))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lowercased_and_chinese_is_cut_into_bigrams() {
        assert_eq!(tokens("Hi, Maya's EV9!"), ["hi", "maya", "s", "ev9"]);
        assert_eq!(tokens("我叫李静 ok"), ["我叫", "叫李", "李静", "ok"]);
        assert_eq!(tokens("用 SGD 表示"), ["用", "sgd", "表示"]);
    }

    #[test]
    fn an_exact_match_ranks_first() {
        let index = Bm25::new([
            "we talked about the weather and the weekend",
            "my daughter starts at the conservatory in September",
            "the weekend weather was fine, the daughter of a friend visited",
            "nothing related here at all",
        ]);
        let ranked = index.rank("daughter conservatory September");
        assert_eq!(ranked.first().map(|r| r.0), Some(1));
        assert!(ranked.iter().all(|(i, _)| *i != 3));
        let zh = Bm25::new(["豆豆对芒果过敏", "今天天气不错", "芒果很好吃"]);
        assert_eq!(zh.rank("芒果过敏").first().map(|r| r.0), Some(0));
    }

    #[test]
    fn longer_documents_weigh_a_match_less() {
        let index = Bm25::new([
            "cello lesson",
            "cello lesson and a very long story about many other things entirely",
        ]);
        let ranked = index.rank("cello");
        assert_eq!(ranked.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1]);
        assert!(ranked[0].1 > ranked[1].1);
    }
}
