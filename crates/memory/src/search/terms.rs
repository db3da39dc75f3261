//! From free user text to safe full-text queries.
//!
//! Text is cut into runs of letters and digits. Runs of CJK characters (which have no
//! spaces between words) are kept apart and searched by their character bigrams (a lone
//! character by itself), the usual unit for Chinese: a two-character word is the common
//! case, and a longer window crosses word boundaries ("房子月租多少" shares no three
//! characters with "月租六千五"). `memory_fts_cjk` indexes trigrams, so each piece is
//! looked up as the indexed trigrams that start with it (see `stats`). Every other run is
//! lowercased, checked against a stop-word list, and dropped when it is one character long.
//! Each term goes into the MATCH expression quoted, so nothing the user types can be read as
//! FTS5 syntax (`NEAR(`, `*`, `-`, `:`, `AND`, quotes…).

use std::collections::{HashMap, HashSet};

use super::forms::forms;
use crate::text::is_cjk;

/// Words too common to say anything about what a memory is about.
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "been", "before", "being", "but", "by", "can", "could", "did", "do", "does",
    "doing", "for", "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "let", "me", "might", "more",
    "most", "must", "my", "no", "not", "now", "of", "off", "on", "once", "only", "or", "other",
    "our", "ours", "out", "over", "please", "same", "shall", "she", "should", "so", "some", "such",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
    "yours",
];

/// One run of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// Letters and digits of a spaced script, lowercased.
    Word(String),
    /// Consecutive CJK characters.
    Cjk(String),
}

/// Cuts `text` into word runs and CJK runs; everything else separates.
pub fn runs(text: &str) -> Vec<Run> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk = String::new();
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

fn flush_word(word: &mut String, out: &mut Vec<Run>) {
    if !word.is_empty() {
        out.push(Run::Word(std::mem::take(word)));
    }
}

fn flush_cjk(cjk: &mut String, out: &mut Vec<Run>) {
    if !cjk.is_empty() {
        out.push(Run::Cjk(std::mem::take(cjk)));
    }
}

/// The searchable terms of a query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryTerms {
    /// Lowercased words of spaced scripts, without stop words, one-character tokens and
    /// duplicates, in the order they appear.
    pub words: Vec<String>,
    /// Character bigrams of CJK runs, and runs of one character, without duplicates.
    pub cjk: Vec<String>,
    /// The CJK runs, for reporting which parts matched.
    pub cjk_runs: Vec<String>,
}

impl QueryTerms {
    /// Parses `text`, keeping at most `max_terms` words and `max_terms` CJK pieces. When a
    /// long message has more, the longest words are kept (length is a cheap stand-in for
    /// rarity) and CJK pieces are sampled evenly across the text.
    pub fn parse(text: &str, max_terms: usize) -> QueryTerms {
        let mut q = QueryTerms::default();
        let mut seen = HashSet::new();
        let mut seen_cjk = HashSet::new();
        for run in runs(text) {
            match run {
                Run::Word(w) => {
                    if w.chars().count() < 2 || STOP_WORDS.binary_search(&w.as_str()).is_ok() {
                        continue;
                    }
                    if seen.insert(w.clone()) {
                        q.words.push(w);
                    }
                }
                Run::Cjk(s) => {
                    for piece in cjk_pieces(&s) {
                        if seen_cjk.insert(piece.clone()) {
                            q.cjk.push(piece);
                        }
                    }
                    if !q.cjk_runs.contains(&s) {
                        q.cjk_runs.push(s);
                    }
                }
            }
        }
        q.words = keep_longest(q.words, max_terms);
        q.cjk = sample_evenly(q.cjk, max_terms);
        q
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.cjk.is_empty()
    }
}

/// The bigrams of a CJK run, in order; a run of one character stands for itself.
fn cjk_pieces(run: &str) -> Vec<String> {
    let chars: Vec<char> = run.chars().collect();
    if chars.len() < 2 {
        return vec![run.to_owned()];
    }
    chars.windows(2).map(|w| w.iter().collect()).collect()
}

/// Quotes one term for FTS5: inside double quotes everything is literal, and a double
/// quote is written twice.
pub fn quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

fn keep_longest(words: Vec<String>, max: usize) -> Vec<String> {
    if words.len() <= max {
        return words;
    }
    let mut indexed: Vec<(usize, String)> = words.into_iter().enumerate().collect();
    indexed.sort_by(|a, b| {
        b.1.chars()
            .count()
            .cmp(&a.1.chars().count())
            .then(a.0.cmp(&b.0))
    });
    indexed.truncate(max);
    indexed.sort_by_key(|(i, _)| *i);
    indexed.into_iter().map(|(_, w)| w).collect()
}

fn sample_evenly(items: Vec<String>, max: usize) -> Vec<String> {
    let n = items.len();
    if n <= max {
        return items;
    }
    (0..max)
        .filter_map(|i| items.get(i * n / max).cloned())
        .collect()
}

/// What kind of index entry a term is looked up as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TermKind {
    /// A word in `memory_fts`, searched with its inflected forms.
    Word,
    /// A CJK bigram or lone character: the trigrams of `memory_fts_cjk` starting with it.
    Cjk,
}

/// One searchable term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub text: String,
    pub kind: TermKind,
    /// What the index is searched for: the word's forms, or the text itself.
    pub forms: Vec<String>,
}

impl Term {
    fn new(text: &str, kind: TermKind) -> Term {
        Term {
            text: text.to_owned(),
            kind,
            forms: match kind {
                TermKind::Word => forms(text),
                TermKind::Cjk => vec![text.to_owned()],
            },
        }
    }

    /// The term in a MATCH expression: every form quoted (so it is never FTS syntax) and
    /// ORed. CJK pieces have none of their own (they expand to indexed trigrams).
    pub fn fts_piece(&self) -> Option<String> {
        match (self.kind, self.forms.as_slice()) {
            (TermKind::Cjk, _) | (_, []) => None,
            (_, [one]) => Some(quote(one)),
            (_, many) => Some(format!(
                "({})",
                many.iter()
                    .map(|f| quote(f))
                    .collect::<Vec<_>>()
                    .join(" OR ")
            )),
        }
    }
}

impl QueryTerms {
    /// Every term, words first, then CJK pieces.
    pub fn all(&self) -> Vec<Term> {
        let tag =
            |list: &[String], kind| list.iter().map(|t| Term::new(t, kind)).collect::<Vec<_>>();
        let mut out = tag(&self.words, TermKind::Word);
        out.extend(tag(&self.cjk, TermKind::Cjk));
        out
    }
}

/// Which of `terms` a unit's text contains, as the full-text indexes would see it: one of
/// a word's forms must be one of the text's words; CJK pieces must occur in its CJK text.
///
/// Called for every candidate (hundreds per long message), so the text is cut as [`runs`]
/// does but in one pass, each word checked in a reused buffer rather than collected.
pub fn presence(terms: &[Term], text: &str) -> Vec<bool> {
    let mut present = vec![false; terms.len()];
    let wants_cjk = terms.iter().any(|t| t.kind != TermKind::Word);
    let mut word = String::new();
    // The CJK runs, each followed by a space (only when a CJK term needs them).
    let mut cjk_text = String::new();
    let mut in_cjk = false;
    let end_word = |word: &mut String, present: &mut [bool]| {
        if word.is_empty() {
            return;
        }
        for (t, p) in terms.iter().zip(present.iter_mut()) {
            if !*p && t.kind == TermKind::Word && t.forms.iter().any(|f| f == word) {
                *p = true;
            }
        }
        word.clear();
    };
    for c in text.chars() {
        // ASCII (most text) takes the cheap checks; they agree with the Unicode ones there.
        if !c.is_ascii() && is_cjk(c) {
            end_word(&mut word, &mut present);
            if wants_cjk {
                cjk_text.push(c);
            }
            in_cjk = true;
            continue;
        }
        if in_cjk && wants_cjk {
            cjk_text.push(' ');
        }
        in_cjk = false;
        if c.is_ascii_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        } else if !c.is_ascii() && c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            end_word(&mut word, &mut present);
        }
    }
    end_word(&mut word, &mut present);
    if in_cjk && wants_cjk {
        cjk_text.push(' ');
    }
    for (t, p) in terms.iter().zip(present.iter_mut()) {
        if t.kind != TermKind::Word {
            *p = cjk_text.contains(t.text.as_str());
        }
    }
    present
}

/// The matched terms for people: words as they are, and for each CJK run of the query the
/// longest stretches whose bigrams all matched ("时间格式" rather than "时间", "间格", "格式").
pub fn matched_terms(q: &QueryTerms, terms: &[Term], present: &[bool]) -> Vec<String> {
    let hit: HashMap<(&str, TermKind), bool> = terms
        .iter()
        .zip(present)
        .map(|(t, p)| ((t.text.as_str(), t.kind), *p))
        .collect();
    let found = |text: &str, kind| hit.get(&(text, kind)).copied().unwrap_or(false);
    let mut out: Vec<String> = q
        .words
        .iter()
        .filter(|w| found(w, TermKind::Word))
        .cloned()
        .collect();
    for run in &q.cjk_runs {
        let chars: Vec<char> = run.chars().collect();
        if chars.len() < 2 {
            if found(run, TermKind::Cjk) {
                out.push(run.clone());
            }
            continue;
        }
        let hits: Vec<bool> = chars
            .windows(2)
            .map(|w| found(&w.iter().collect::<String>(), TermKind::Cjk))
            .collect();
        let mut i = 0;
        while i < hits.len() {
            if !hits[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i < hits.len() && hits[i] {
                i += 1;
            }
            out.push(chars[start..=i].iter().collect());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn drops_stop_words_short_tokens_and_duplicates() {
        let q = QueryTerms::parse("What time FORMAT should I use? time, x 42 ISO-8601", 16);
        assert_eq!(q.words, vec!["time", "format", "use", "42", "iso", "8601"]);
        let pieces: Vec<_> = q.all().iter().filter_map(Term::fts_piece).collect();
        assert!(
            pieces[0].starts_with(r#"("time" OR "times" OR "#),
            "{}",
            pieces[0]
        );
        assert_eq!(pieces[3], r#""42""#);
        assert!(pieces[4].starts_with(r#"("iso" OR "#));
        assert_eq!(pieces[5], r#""8601""#);
    }

    #[test]
    fn fts_syntax_is_only_ever_quoted_words() {
        let q = QueryTerms::parse(r#"NEAR(a b) "x" col:val -neg pre* AND OR"#, 16);
        assert_eq!(q.words, vec!["near", "col", "val", "neg", "pre"]);
        assert_eq!(quote(r#"a"b"#), r#""a""b""#);
        assert!(QueryTerms::parse("?? !! * - :", 16).is_empty());
    }

    #[test]
    fn cjk_runs_become_bigrams_or_single_characters() {
        let q = QueryTerms::parse("时间格式 用 UTC", 16);
        assert_eq!(q.words, vec!["utc"]);
        assert_eq!(q.cjk, vec!["时间", "间格", "格式", "用"]);
        let terms = q.all();
        let present = presence(&terms, "所有时间格式都用 UTC");
        assert_eq!(present, vec![true, true, true, true, true]);
        assert_eq!(
            matched_terms(&q, &terms, &present),
            vec!["utc", "时间格式", "用"]
        );
    }

    /// `presence` as first written: every run collected, words in a set.
    fn presence_reference(terms: &[Term], text: &str) -> Vec<bool> {
        let mut words = HashSet::new();
        let mut cjk_text = String::new();
        for run in runs(text) {
            match run {
                Run::Word(w) => {
                    words.insert(w);
                }
                Run::Cjk(s) => {
                    cjk_text.push_str(&s);
                    cjk_text.push(' ');
                }
            }
        }
        terms
            .iter()
            .map(|t| match t.kind {
                TermKind::Word => t.forms.iter().any(|f| words.contains(f)),
                TermKind::Cjk => cjk_text.contains(t.text.as_str()),
            })
            .collect()
    }

    #[test]
    fn presence_matches_the_run_based_definition() {
        let query = "Times FORMAT formatted 时间格式 用 日志 UTC iso-8601 ÉTÉ straße 间 式用";
        let terms = QueryTerms::parse(query, 16).all();
        for text in [
            "所有时间格式都用 UTC",
            "time formats: ISO 8601, 时间 格式用",
            "Été in STRASSE; the timing was formatted.式用",
            "日志x时间格式y用",
            "",
            "时间格式",
            "no match at all",
        ] {
            assert_eq!(
                presence(&terms, text),
                presence_reference(&terms, text),
                "{text}"
            );
        }
    }

    #[test]
    fn long_queries_keep_the_longest_words_in_order() {
        let q = QueryTerms::parse("aa bbbb cc dddddd ee", 2);
        assert_eq!(q.words, vec!["bbbb", "dddddd"]);
    }
}
