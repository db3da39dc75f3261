//! Inflected forms of an English query word, so "time" also finds "times" and "format"
//! finds "formatted". The index stores words as written (no stemmer), and prefix queries
//! are too slow on common prefixes (FTS5 merges every matching word's document list up
//! front), so a query word is searched as a small OR of exact forms instead.

/// Most forms per word: each costs a lookup in every index segment, found or not.
const MAX_FORMS: usize = 6;

/// `word` and its likely inflections, `word` first, without duplicates: a suffixed word
/// ("deploying", "tests", "formatted") adds its likely bases and the first base's plural;
/// a bare word adds its plural, -ed and -ing forms. Words that are not plain ASCII
/// letters, or shorter than three letters, are left alone.
pub fn forms(word: &str) -> Vec<String> {
    let mut out = vec![word.to_owned()];
    if word.len() < 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return out;
    }
    let bases = bases(word);
    if let Some(first) = bases.first() {
        let plural = plural(first);
        for base in bases {
            push(&mut out, base);
        }
        push(&mut out, plural);
    } else {
        push(&mut out, plural(word));
        match word.strip_suffix('e') {
            Some(stem) => {
                push(&mut out, format!("{word}d"));
                push(&mut out, format!("{stem}ing"));
            }
            None => {
                let doubled = doubles(word).map(|c| format!("{word}{c}"));
                let stem = doubled.as_deref().unwrap_or(word);
                push(&mut out, format!("{stem}ed"));
                push(&mut out, format!("{stem}ing"));
            }
        }
    }
    out.truncate(MAX_FORMS);
    out
}

/// Likely bases of a suffixed word, most likely first; empty for a bare word.
fn bases(word: &str) -> Vec<String> {
    let strip = |suffix: &str, min: usize| {
        word.strip_suffix(suffix)
            .filter(|s| s.len() >= min)
            .map(str::to_owned)
    };
    let mut out = Vec::new();
    if let Some(s) = strip("ies", 2) {
        out.push(format!("{s}y"));
    } else if let Some(s) = strip("ing", 2).or_else(|| strip("ed", 2)) {
        out.push(s.clone());
        if let Some(u) = undouble(&s) {
            out.push(u);
        }
        out.push(format!("{s}e"));
    } else if word.ends_with("ss") {
        // "class", "process": not a plural.
    } else if let Some(s) = strip("s", 3) {
        // "caches" → "cache", "boxes" → "box".
        if let Some(es) = s
            .strip_suffix('e')
            .filter(|e| e.ends_with(['s', 'x', 'z', 'h']))
        {
            out.push(s.clone());
            out.push(es.to_owned());
        } else {
            out.push(s);
        }
    }
    out
}

fn plural(word: &str) -> String {
    match word.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{stem}ies"),
        _ if word.ends_with(['s', 'x', 'z']) || word.ends_with("ch") || word.ends_with("sh") => {
            format!("{word}es")
        }
        _ => format!("{word}s"),
    }
}

/// The consonant a stem doubles before -ed/-ing ("format" → "formatted"): a final
/// consonant other than w, x, y after a single vowel.
fn doubles(stem: &str) -> Option<char> {
    let b = stem.as_bytes();
    let vowel = |c: u8| b"aeiou".contains(&c);
    match b {
        [.., c0, v, c] if !vowel(*c0) && vowel(*v) && !vowel(*c) && !b"wxy".contains(c) => {
            Some(char::from(*c))
        }
        _ => None,
    }
}

/// "formatt" → "format" (not "pass" → "pas": s, f and z double in bare words too).
fn undouble(stem: &str) -> Option<String> {
    let b = stem.as_bytes();
    match b {
        [.., x, y] if x == y && !b"aeiousfz".contains(x) => Some(stem[..stem.len() - 1].to_owned()),
        _ => None,
    }
}

fn push(out: &mut Vec<String>, form: String) {
    if !out.contains(&form) {
        out.push(form);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_inflections_are_covered() {
        let has = |word: &str, form: &str| forms(word).iter().any(|f| f == form);
        for form in ["times", "timed", "timing"] {
            assert!(has("time", form), "{form} in {:?}", forms("time"));
        }
        for form in ["formats", "formatted", "formatting"] {
            assert!(has("format", form), "{form} in {:?}", forms("format"));
        }
        assert!(has("formatted", "format"));
        assert!(has("tests", "test"));
        assert!(has("deploying", "deploy"));
        assert!(has("used", "use"));
        assert!(has("policies", "policy"));
        assert!(!has("class", "clas"));
        assert_eq!(forms("8601"), vec!["8601"]);
        assert_eq!(forms("go"), vec!["go"]);
        assert!(has("boxes", "box"));
        assert!(has("caches", "cache"));
        assert!(has("box", "boxes"));
        assert!(forms("formatting").len() <= MAX_FORMS);
    }
}
