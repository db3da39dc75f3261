//! The user's requests an evolved skill keeps as retrieval text (see
//! [`crate::Provenance::requests`]).

/// Requests kept per skill: the newest, so the text stays small and about recent use.
pub const MAX_REQUESTS: usize = 8;
/// Characters kept of each request: a request names its kind of task in its first words;
/// a pasted log or document after them would only add noise.
const MAX_CHARS: usize = 300;

/// The user's texts (already read out of the agent's wrapping), each on one line and
/// clipped, empty ones and repeats left out, the newest [`MAX_REQUESTS`] in order.
pub fn requests_of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for text in texts {
        let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let line = match line.char_indices().nth(MAX_CHARS) {
            Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
            None => line,
        };
        if line.is_empty() {
            continue;
        }
        out.retain(|r| *r != line);
        out.push(line);
    }
    let skip = out.len().saturating_sub(MAX_REQUESTS);
    out.split_off(skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_each_newest_kept_repeats_once() {
        let texts = ["  Log the\n stand-up  ", "", "b", "Log the stand-up"];
        assert_eq!(requests_of(texts), ["b", "Log the stand-up"]);
        let many: Vec<String> = (0..20).map(|i| format!("request {i}")).collect();
        let kept = requests_of(many.iter().map(String::as_str));
        assert_eq!(kept.len(), MAX_REQUESTS);
        assert_eq!(kept.last().map(String::as_str), Some("request 19"));
        let long = "x".repeat(1_000);
        assert_eq!(
            requests_of([long.as_str()])[0].chars().count(),
            MAX_CHARS + 1
        );
    }
}
