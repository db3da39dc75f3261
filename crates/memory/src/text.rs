//! Text helpers for extraction and reconciliation: stripping MetaClaw's own injected block,
//! a Unicode-aware tokeniser, content normalisation, and bounded excerpts.

use std::borrow::Cow;
use std::collections::BTreeSet;

/// Delimiters of the block MetaClaw injects into prompts (the proxy's `inject.rs`).
pub const BLOCK_START: &str = "<metaclaw-context>";
pub const BLOCK_END: &str = "</metaclaw-context>";

/// `text` without any `<metaclaw-context>…</metaclaw-context>` span; an unclosed start drops
/// everything after it, a stray end tag is removed. Memory must never learn from its own
/// injected text.
pub fn strip_injected(text: &str) -> Cow<'_, str> {
    if !text.contains(BLOCK_START) && !text.contains(BLOCK_END) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(BLOCK_START) {
        out.push_str(&rest[..start]);
        let after = &rest[start + BLOCK_START.len()..];
        match after.find(BLOCK_END) {
            Some(end) => rest = &after[end + BLOCK_END.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out.replace(BLOCK_END, ""))
}

/// Han, kana and Hangul: scripts written without spaces, tokenised by character bigrams.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F) // Extensions B–F, compatibility supplement
}

/// Words too common to say anything about a fact, in the five languages the rules know, plus
/// the words extraction itself adds ("user", "prefers").
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "i",
    "me",
    "my",
    "we",
    "our",
    "us",
    "you",
    "your",
    "it",
    "its",
    "is",
    "are",
    "am",
    "be",
    "was",
    "were",
    "to",
    "of",
    "in",
    "on",
    "for",
    "with",
    "and",
    "or",
    "at",
    "by",
    "as",
    "that",
    "this",
    "these",
    "those",
    "do",
    "does",
    "so",
    "user",
    "user's",
    "users",
    "el",
    "la",
    "los",
    "las",
    "un",
    "una",
    "de",
    "del",
    "que",
    "y",
    "en",
    "con",
    "por",
    "para",
    "es",
    "usuario",
    "le",
    "les",
    "une",
    "des",
    "du",
    "et",
    "est",
    "pour",
    "avec",
    "utilisateur",
    "l",
    "d",
    "der",
    "die",
    "das",
    "ein",
    "eine",
    "und",
    "ist",
    "mit",
    "für",
    "zu",
    "im",
    "nutzer",
    "benutzer",
];

pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// Lowercase word tokens: letters and digits of any script, apostrophes and hyphens kept
/// inside words. Runs of CJK characters become their character bigrams (a lone character
/// stays a unigram), since those scripts do not separate words with spaces. Stopwords are
/// dropped and a plural or third-person `s` is folded (`prefers` → `prefer`).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if is_cjk(c) {
            flush_word(&mut word, &mut out);
            cjk.push(c);
        } else if c.is_alphanumeric() || ((c == '\'' || c == '-') && !word.is_empty()) {
            flush_cjk(&mut cjk, &mut out);
            word.push(c);
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
    let w = word.trim_end_matches(['\'', '-']);
    if !w.is_empty() && !is_stopword(w) {
        out.push(fold_plural(w).to_string());
    }
    word.clear();
}

fn fold_plural(w: &str) -> &str {
    let n = w.chars().count();
    if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") {
        &w[..w.len() - 1]
    } else {
        w
    }
}

fn flush_cjk(run: &mut Vec<char>, out: &mut Vec<String>) {
    match run.len() {
        0 => {}
        1 => out.push(run[0].to_string()),
        _ => out.extend(run.windows(2).map(|p| p.iter().collect::<String>())),
    }
    run.clear();
}

/// The distinct tokens of `text`.
pub fn token_set(text: &str) -> BTreeSet<String> {
    tokens(text).into_iter().collect()
}

/// Content reduced for equality: tokens (stopwords dropped, plurals folded) in order, so
/// "The user prefers tabs." and "User prefers tabs" are the same content.
pub fn normalized(text: &str) -> String {
    tokens(text).join(" ")
}

/// Whitespace (newlines included) collapsed to single spaces, ends trimmed.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` chars (plus a one-line marker), keeping the head and the tail:
/// a request is stated at the start and its outcome at the end. Cuts fall on char boundaries.
pub fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let head_chars = max * 3 / 5;
    let tail_chars = max - head_chars;
    let head_end = byte_at(text, head_chars);
    let tail_start = byte_at(text, total - tail_chars);
    let omitted = total - head_chars - tail_chars;
    format!(
        "{}\n[… {omitted} chars omitted …]\n{}",
        text[..head_end].trim_end(),
        text[tail_start..].trim_start()
    )
}

/// One line cut to `max` chars, with `…` when something was cut. Reads only as much of
/// `text` as it keeps.
pub fn clip(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut len = 0;
    for word in text.split_whitespace() {
        if len > 0 {
            if len == max {
                return format!("{out}…");
            }
            out.push(' ');
            len += 1;
        }
        for c in word.chars() {
            if len == max {
                return format!("{}…", out.trim_end());
            }
            out.push(c);
            len += 1;
        }
    }
    out
}

/// Byte offset of the `n`th char (or the end).
fn byte_at(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

/// `text` in a code fence longer than any backtick run inside it, so quoted conversation
/// text cannot end the block early and pose as prompt instructions.
pub fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{text}\n{fence}")
}

/// A slot name reduced to `[a-z0-9_:.-]`: lowercase, common Latin accents folded, any other
/// run of characters one `_`, at most 64 chars. `None` when nothing is left.
pub fn slot(raw: &str) -> Option<String> {
    let mut out = String::new();
    for c in raw.chars().flat_map(char::to_lowercase) {
        match c {
            'a'..='z' | '0'..='9' | ':' | '.' | '-' | '_' => out.push(c),
            _ => match fold_accent(c) {
                Some(f) => out.push_str(f),
                None if !out.ends_with('_') => out.push('_'),
                None => {}
            },
        }
    }
    let mut s = out.trim_matches(['_', '.', '-', ':']).to_string();
    for (from, to) in [("__", "_"), (":_", ":"), ("_:", ":")] {
        while s.contains(from) {
            s = s.replace(from, to);
        }
    }
    if let Some((i, _)) = s.char_indices().nth(64) {
        s.truncate(i);
        s = s.trim_end_matches(['_', '.', '-', ':']).to_string();
    }
    (!s.is_empty() && s.chars().any(|c| c.is_ascii_alphanumeric())).then_some(s)
}

fn fold_accent(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'å' | 'ā' => "a",
        'ä' | 'æ' => "ae",
        'ç' | 'č' => "c",
        'è' | 'é' | 'ê' | 'ë' | 'ē' => "e",
        'ì' | 'í' | 'î' | 'ï' => "i",
        'ñ' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ø' => "o",
        'ö' | 'œ' => "oe",
        'ù' | 'ú' | 'û' => "u",
        'ü' => "ue",
        'ß' => "ss",
        'ý' | 'ÿ' => "y",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_injected_blocks() {
        let t = "a <metaclaw-context>\nmem\n</metaclaw-context> b";
        assert_eq!(strip_injected(t), "a  b");
        assert_eq!(strip_injected("x <metaclaw-context> never closed"), "x ");
        assert_eq!(strip_injected("x </metaclaw-context> y"), "x  y");
        assert!(matches!(strip_injected("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn tokens_split_cjk_and_fold() {
        assert_eq!(tokens("The user prefers TABS."), ["prefer", "tab"]);
        assert_eq!(
            tokens("我喜欢深色主题"),
            ["我喜", "喜欢", "欢深", "深色", "色主", "主题"]
        );
        assert_eq!(tokens("用 Rust 写"), ["用", "rust", "写"]);
        assert_eq!(
            tokens("l'utilisateur préfère"),
            ["l'utilisateur", "préfère"]
        );
        assert_eq!(
            normalized("User prefers tabs"),
            normalized("the user prefers tabs.")
        );
    }

    #[test]
    fn slots_are_ascii() {
        assert_eq!(
            slot("Pref: Time Format").as_deref(),
            Some("pref:time_format")
        );
        assert_eq!(
            slot("pref:time_format").as_deref(),
            Some("pref:time_format")
        );
        assert_eq!(slot("pref:préférence").as_deref(), Some("pref:preference"));
        assert_eq!(slot("偏好"), None);
        assert_eq!(slot(&"x".repeat(100)).map(|s| s.len()), Some(64));
    }

    #[test]
    fn excerpt_and_clip_respect_char_boundaries() {
        let text = "é".repeat(50) + &"字".repeat(50);
        let out = excerpt(&text, 20);
        assert!(out.starts_with(&"é".repeat(12)), "{out}");
        assert!(out.ends_with(&"字".repeat(8)), "{out}");
        assert_eq!(clip("ab\ncd  ef", 4), "ab c…");
        assert_eq!(fenced("x ```` y"), "`````\nx ```` y\n`````");
    }
}
