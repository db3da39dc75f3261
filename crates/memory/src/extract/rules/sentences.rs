//! Splitting the user's text into sentences the phrase table can read.

/// The user's own prose: MetaClaw's injected block, fenced code and quoted lines removed,
/// curly apostrophes made straight.
pub fn user_prose(text: &str) -> String {
    let text = crate::text::strip_injected(text);
    let mut out = String::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            out.push('\n');
            continue;
        }
        if in_fence || t.starts_with('>') {
            out.push('\n');
            continue;
        }
        out.push_str(&line.replace('’', "'"));
        out.push('\n');
    }
    out
}

/// Sentences, trimmed, each with its closing mark. Breaks at line ends, at `。！？；`, and at
/// `.!?;` followed by a space or the end (so `config.yaml` and `e.g.x` stay whole).
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        let end = match c {
            '\n' => Some(i),
            '。' | '！' | '？' | '；' => Some(i + c.len_utf8()),
            '.' | '!' | '?' | ';' if next_is_space => Some(i + 1),
            _ => None,
        };
        if let Some(end) = end {
            push(&mut out, &text[start..end]);
            start = end;
        }
    }
    push(&mut out, &text[start..]);
    out
}

fn push<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let s = s.trim();
    if !s.is_empty() {
        out.push(s);
    }
}

/// A question asks, it does not state: "Do you always …?", "¿Siempre …?", "…吗".
pub fn is_question(s: &str) -> bool {
    s.contains(['?', '？', '¿'])
        || s.trim_end_matches(['。', '.', '!', '！'])
            .ends_with(['吗', '呢', '么'])
}

/// `s` after `prefix`, compared case-insensitively char by char. A prefix ending in a letter
/// must end at a word boundary ("never" does not match "nevertheless"); CJK prefixes need
/// none, since those scripts have no spaces.
pub fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let mut rest = s.char_indices();
    let mut end = 0;
    for p in prefix.chars() {
        let (i, c) = rest.next()?;
        if !c.to_lowercase().eq(p.to_lowercase()) {
            return None;
        }
        end = i + c.len_utf8();
    }
    let tail = &s[end..];
    let last = prefix.chars().last()?;
    let needs_boundary = last.is_alphanumeric() && !crate::text::is_cjk(last);
    if needs_boundary && tail.chars().next().is_some_and(char::is_alphanumeric) {
        return None;
    }
    Some(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_without_breaking_file_names() {
        assert_eq!(
            sentences("We use config.yaml. Always test!\n第一。第二"),
            ["We use config.yaml.", "Always test!", "第一。", "第二"]
        );
    }

    #[test]
    fn prefix_respects_words() {
        assert_eq!(strip_prefix_ci("Never push", "never"), Some(" push"));
        assert_eq!(strip_prefix_ci("Nevertheless", "never"), None);
        assert_eq!(strip_prefix_ci("不要用分号", "不要"), Some("用分号"));
        assert_eq!(strip_prefix_ci("JE PRÉFÈRE x", "je préfère"), Some(" x"));
    }

    #[test]
    fn drops_code_quotes_and_injected_text() {
        let t = "a\n```\nalways x\n```\n> never y\n<metaclaw-context>always z</metaclaw-context>b";
        assert_eq!(
            user_prose(t).split_whitespace().collect::<Vec<_>>(),
            ["a", "b"]
        );
    }
}
