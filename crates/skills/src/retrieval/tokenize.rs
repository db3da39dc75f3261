//! Text → index terms, identical for skills and queries.
//!
//! - Lowercase (Unicode-aware) and split on anything that is not alphanumeric, so
//!   `debug-systematically`, `e.g.` and `foo_bar` split into words.
//! - Han, Hiragana and Katakana have no spaces between words: a run of them yields its
//!   character bigrams (a lone character yields itself), the usual cheap substitute for a
//!   segmenter. Other scripts (Cyrillic, Greek, Hangul, …) are space-separated and kept as words.
//! - Drop English stopwords, conversational filler (greetings carry no task signal) and
//!   one-character ASCII tokens (`s` from `what's`, list markers).
//! - Stem ASCII words lightly: plurals, `ing`, `ed`, `ly`, then a final `e`, each only when
//!   at least three characters remain. Stems need not be words; they only have to agree
//!   between a skill and a query (`testing`/`tests`/`tested` → `test`, `write`/`writing` →
//!   `writ`). Porter-style rules go further but conflate too much for short skill texts.

/// Sorted; checked by `binary_search`.
const STOPWORDS: &[&str] = &[
    "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can",
    "could", "did", "didn", "do", "does", "doesn", "doing", "don", "during", "each", "for", "from",
    "further", "get", "got", "had", "has", "have", "having", "he", "hello", "her", "here", "hers",
    "hey", "hi", "him", "his", "how", "if", "in", "into", "is", "isn", "it", "its", "just", "let",
    "ll", "me", "more", "most", "my", "no", "nor", "not", "now", "of", "off", "ok", "okay", "on",
    "once", "only", "or", "other", "our", "ours", "out", "over", "own", "please", "re", "same",
    "she", "should", "so", "some", "such", "than", "thank", "thanks", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
    "until", "up", "us", "ve", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "won", "would", "you", "your", "yours",
];

/// Words the suffix rules would mangle into another word's stem (`news` → `new`). Sorted.
const KEEP: &[&str] = &["always", "news", "series", "species", "yes"];

/// Tokens of `text`, in order, duplicates kept.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_owned()));
    out
}

/// Calls `emit` with each token of `text`; allocates only two scratch buffers, so the query
/// path can look tokens up without owning them.
pub fn for_each_token(text: &str, mut emit: impl FnMut(&str)) {
    let mut word = String::new();
    let mut pair = String::new();
    let mut cjk_prev: Option<char> = None;
    let mut cjk_run = 0usize;
    for c in text.chars() {
        if is_cjk(c) {
            flush_word(&mut word, &mut emit);
            if let Some(prev) = cjk_prev {
                pair.clear();
                pair.push(prev);
                pair.push(c);
                emit(&pair);
            }
            cjk_prev = Some(c);
            cjk_run += 1;
            continue;
        }
        flush_cjk(&mut cjk_prev, &mut cjk_run, &mut pair, &mut emit);
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            flush_word(&mut word, &mut emit);
        }
    }
    flush_cjk(&mut cjk_prev, &mut cjk_run, &mut pair, &mut emit);
    flush_word(&mut word, &mut emit);
}

pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}'   // Hiragana, Katakana
        | '\u{3400}'..='\u{4dbf}' // CJK extension A
        | '\u{4e00}'..='\u{9fff}' // CJK unified ideographs
        | '\u{f900}'..='\u{faff}' // CJK compatibility ideographs
        | '\u{20000}'..='\u{2ebef}')
}

/// Ends a CJK run; a run of one character has no bigram, so it stands for itself.
fn flush_cjk(
    prev: &mut Option<char>,
    run: &mut usize,
    buf: &mut String,
    emit: &mut impl FnMut(&str),
) {
    if let (Some(c), 1) = (*prev, *run) {
        buf.clear();
        buf.push(c);
        emit(buf);
    }
    *prev = None;
    *run = 0;
}

fn flush_word(word: &mut String, emit: &mut impl FnMut(&str)) {
    let too_short = word.is_empty() || word.len() == 1 && word.is_ascii();
    let keep = !too_short && STOPWORDS.binary_search(&word.as_str()).is_err();
    if keep {
        stem(word);
        emit(word);
    }
    word.clear();
}

const MIN_STEM: usize = 3;

fn stem(w: &mut String) {
    if !w.is_ascii() || KEEP.binary_search(&w.as_str()).is_ok() {
        return;
    }
    strip_plural(w);
    strip_ending(w);
    // `write`/`writing`, `cache`/`caching` meet at the stem without the `e`.
    if w.len() > MIN_STEM && w.ends_with('e') && !w.ends_with("ee") {
        w.pop();
    }
}

fn strip_plural(w: &mut String) {
    let n = w.len();
    let sibilant_es = ["sses", "xes", "ches", "shes", "zes"]
        .iter()
        .any(|s| w.ends_with(s));
    if w.ends_with("ies") && n - 3 >= MIN_STEM {
        w.truncate(n - 3);
        w.push('y');
    } else if sibilant_es && n - 2 >= MIN_STEM {
        w.truncate(n - 2);
    } else if w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
        && n > MIN_STEM
    {
        w.truncate(n - 1);
    }
}

fn strip_ending(w: &mut String) {
    let n = w.len();
    if w.ends_with("ied") && n - 3 >= MIN_STEM {
        w.truncate(n - 3);
        w.push('y');
    } else if w.ends_with("ing") && n - 3 >= MIN_STEM {
        w.truncate(n - 3);
        undouble(w);
    } else if w.ends_with("ed") && !w.ends_with("eed") && n - 2 >= MIN_STEM {
        w.truncate(n - 2);
        undouble(w);
    } else if w.ends_with("ly") && !w.ends_with("ply") && n - 2 > MIN_STEM {
        // `ly` needs a four-letter stem: `early`, `daily`, `reply` stay whole.
        w.truncate(n - 2);
    }
}

/// `debugging` → `debugg` → `debug`; `calling`, `passing` keep their double letter.
fn undouble(w: &mut String) {
    let b = w.as_bytes();
    let n = b.len();
    if n > MIN_STEM && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z' | b'f') {
        w.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_lists_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|p| p[0] < p[1]));
        assert!(KEEP.windows(2).all(|p| p[0] < p[1]));
    }
}
