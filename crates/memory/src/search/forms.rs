//! Inflected forms of an English query word, so "time" also finds "times" and "format"
//! finds "formatted". The index stores words as written (no stemmer), and prefix queries
//! are too slow on common prefixes (FTS5 merges every matching word's document list up
//! front), so a query word is searched as a small OR of exact forms instead.

/// Most forms per word: each costs a lookup in every index segment, found or not.
const MAX_FORMS: usize = 8;

/// `word` and its likely inflections, `word` first, without duplicates: a suffixed word
/// ("deploying", "plays", "formatted") adds its likely bases and the regular forms of the
/// likeliest one ("plays" finds "played" and "playing"); a bare word adds its plural, -ed
/// and -ing forms. Words that are not plain ASCII letters, or shorter than three letters,
/// are left alone.
pub fn forms(word: &str) -> Vec<String> {
    let mut out = vec![word.to_owned()];
    if word.len() < 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return out;
    }
    let bases = bases(word);
    let base = bases.first().cloned().unwrap_or_else(|| word.to_owned());
    for b in bases {
        push(&mut out, b);
    }
    for form in paradigm(&base) {
        push(&mut out, form);
    }
    out.truncate(MAX_FORMS);
    out
}

/// The regular plural, -ed and -ing forms of a base word.
fn paradigm(base: &str) -> Vec<String> {
    let mut out = vec![plural(base)];
    if let Some(stem) = base.strip_suffix('e') {
        out.push(format!("{base}d"));
        out.push(format!("{stem}ing"));
    } else if let Some(stem) = base.strip_suffix('y').filter(|s| !ends_with_vowel(s)) {
        out.push(format!("{stem}ied"));
        out.push(format!("{base}ing"));
    } else {
        match doubles(base) {
            // One syllable: "stop" → "stopped". Longer words double only when the last
            // syllable is stressed ("format" → "formatted", "visit" → "visited"): both.
            Some(c) => {
                out.push(format!("{base}{c}ed"));
                out.push(format!("{base}{c}ing"));
                if syllables(base) > 1 {
                    out.push(format!("{base}ed"));
                    out.push(format!("{base}ing"));
                }
            }
            None => {
                out.push(format!("{base}ed"));
                out.push(format!("{base}ing"));
            }
        }
    }
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
    if let Some(s) = strip("ies", 2).or_else(|| strip("ied", 2)) {
        out.push(format!("{s}y"));
    } else if let Some(s) = strip("ing", 2).or_else(|| strip("ed", 2)) {
        if let Some(u) = undouble(&s) {
            // "formatted" → "format"; but "calling" → "call" first ("ll" ends many bases).
            if s.ends_with("ll") {
                out.push(s);
                out.push(u);
            } else {
                out.push(u);
                out.push(s);
            }
        } else if syllables(&s) == 1 && doubles(&s).is_some() {
            // A short stem that would have doubled had it been the base: "hoped" → "hope",
            // "used" → "use", "timing" → "time".
            out.push(format!("{s}e"));
            out.push(s);
        } else {
            out.push(s.clone());
            out.push(format!("{s}e"));
        }
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
        Some(stem) if !ends_with_vowel(stem) => format!("{stem}ies"),
        _ if word.ends_with(['s', 'x', 'z']) || word.ends_with("ch") || word.ends_with("sh") => {
            format!("{word}es")
        }
        _ => format!("{word}s"),
    }
}

fn is_vowel(c: u8) -> bool {
    b"aeiou".contains(&c)
}

fn ends_with_vowel(word: &str) -> bool {
    word.bytes().last().is_some_and(is_vowel)
}

/// Groups of vowels (y counts after the first letter): a rough syllable count.
fn syllables(word: &str) -> usize {
    let mut count = 0;
    let mut in_vowel = false;
    for (i, c) in word.bytes().enumerate() {
        let v = is_vowel(c) || (i > 0 && c == b'y');
        if v && !in_vowel {
            count += 1;
        }
        in_vowel = v;
    }
    count
}

/// The consonant a stem doubles before -ed/-ing ("stop" → "stopped"): a final consonant
/// other than w, x, y after a single vowel (at the start of the word, or after a consonant).
fn doubles(stem: &str) -> Option<char> {
    let b = stem.as_bytes();
    let single_vowel =
        |before: Option<&u8>, v: u8| is_vowel(v) && before.is_none_or(|c| !is_vowel(*c));
    match b {
        [.., v, c] if !is_vowel(*c) && !b"wxy".contains(c) => {
            let before = b.len().checked_sub(3).and_then(|i| b.get(i));
            single_vowel(before, *v).then_some(char::from(*c))
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
        // The base's regular forms, from any inflection of it.
        assert!(has("plays", "played") && has("plays", "playing"));
        assert!(has("played", "plays"));
        assert!(has("studied", "study") && has("studied", "studies"));
        assert!(has("hoped", "hope") && has("hoped", "hoping") && has("hope", "hoped"));
        assert!(has("stop", "stopped") && !has("stop", "stoped"));
        assert!(has("visit", "visited") && has("format", "formatted"));
        assert!(has("calling", "calls") && has("calling", "called"));
        assert!(has("formatting", "formats"));
        assert_eq!(forms("used")[1], "use");
        assert_eq!(forms("tested")[1], "test");
        assert_eq!(forms("needed")[1], "need");
    }
}
