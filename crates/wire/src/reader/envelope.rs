//! The envelopes agents put around the user's words, and how each is taken off.

/// MetaClaw's own context block.
pub const BLOCK_START: &str = "<metaclaw-context>";
pub const BLOCK_END: &str = "</metaclaw-context>";

/// Wrapped regions removed whole: (start, end). An unclosed start runs to the end of the text.
const WRAPPED: &[(&str, &str)] = &[
    (BLOCK_START, BLOCK_END),
    // OpenClaw's internal context (active exec sessions, subagents), its own user message.
    (
        "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>",
        "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>",
    ),
    // Claude Code's reminders (CLAUDE.md, todo state, date) at the start of user messages.
    ("<system-reminder>", "</system-reminder>"),
    ("<internal-context>", "</internal-context>"),
];

/// Bracketed one-line notes OpenClaw puts before forwarded or queued messages.
const BRACKETED: &[&str] = &[
    "[Queued message",
    "[Conversation info",
    "[Sender",
    "[Forwarded message context",
    "[Replied message context",
];

const WEEKDAYS: &[&str] = &["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// The user's own words in one message's text: every known envelope, metadata block, stamp
/// and injected block removed, surrounding blank space trimmed.
pub fn own_words(text: &str) -> String {
    let mut text = text.to_string();
    for (start, end) in WRAPPED {
        if text.contains(start) {
            text = remove_between(&text, start, end);
        }
    }
    let mut out: Vec<&str> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t.starts_with("Runtime:") {
            continue;
        }
        if is_metadata_header(t) {
            skip_metadata_body(&mut lines);
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') && BRACKETED.iter().any(|p| t.starts_with(p)) {
            continue;
        }
        out.push(without_stamp(line));
    }
    out.join("\n").trim().to_string()
}

/// OpenClaw stamps the user's text with the time it arrived: `[Thu 2026-12-03 17:38 UTC] `.
fn without_stamp(line: &str) -> &str {
    let Some(inner_end) = line.find(']').filter(|&i| i < 48) else {
        return line;
    };
    let Some(inner) = line.get(1..inner_end).filter(|_| line.starts_with('[')) else {
        return line;
    };
    let mut parts = inner.split(' ');
    let day = parts.next().unwrap_or_default();
    let date = parts.next().unwrap_or_default();
    let is_date = date.len() == 10
        && date.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if WEEKDAYS.contains(&day) && is_date {
        line[inner_end + 1..].trim_start()
    } else {
        line
    }
}

fn is_metadata_header(t: &str) -> bool {
    let lower = t.to_ascii_lowercase();
    lower.ends_with("(untrusted metadata):")
        || lower.starts_with("conversation info") && lower.ends_with(':')
}

/// Skips a fenced block or a run of JSON lines following a metadata header.
fn skip_metadata_body<'a>(lines: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>) {
    match lines.peek().map(|l| l.trim()) {
        Some(l) if l.starts_with("```") => {
            lines.next();
            for l in lines.by_ref() {
                if l.trim().starts_with("```") {
                    break;
                }
            }
        }
        Some(l) if l.starts_with('{') => {
            let mut depth = 0i64;
            for l in lines.by_ref() {
                depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
                if depth <= 0 {
                    break;
                }
            }
        }
        _ => {}
    }
}

fn remove_between(text: &str, start: &str, end: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(start) {
        out.push_str(&rest[..i]);
        match rest[i..].find(end) {
            Some(j) => rest = &rest[i + j + end.len()..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}
