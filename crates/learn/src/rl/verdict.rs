//! Reading the judge: the score in one reply, the majority over the votes, and the text
//! the judge is shown.

/// The last `Score: N` in `text` (any case, optional sign), else the last `\boxed{N}`;
/// only -1, 0 and 1 are accepted.
pub fn parse_score(text: &str) -> Option<i8> {
    let lower = text.to_ascii_lowercase();
    last_number_after(&lower, "score:").or_else(|| last_number_after(&lower, "\\boxed{"))
}

fn last_number_after(text: &str, marker: &str) -> Option<i8> {
    text.rmatch_indices(marker).find_map(|(at, _)| {
        let rest = text[at + marker.len()..].trim_start();
        let rest = rest.trim_start_matches(['*', '`', ' ']);
        let (sign, digits) = match rest.as_bytes().first()? {
            b'+' => (1, &rest[1..]),
            b'-' => (-1, &rest[1..]),
            _ => (1, rest),
        };
        let digit = digits.as_bytes().first()?;
        let followed_by_digit = digits.as_bytes().get(1).is_some_and(u8::is_ascii_digit);
        match digit {
            b'0' | b'1' if !followed_by_digit => Some(sign * (digit - b'0') as i8),
            _ => None,
        }
    })
}

/// Majority of the readable votes; no readable vote, or a tie for the top count, gives 0.
pub fn majority(votes: &[Option<i8>]) -> f64 {
    let mut counts = [0usize; 3];
    for v in votes.iter().flatten() {
        counts[(v + 1) as usize] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(0);
    if top == 0 || counts.iter().filter(|&&c| c == top).count() > 1 {
        return 0.0;
    }
    counts
        .iter()
        .position(|&c| c == top)
        .map_or(0.0, |i| i as f64 - 1.0)
}

/// Replaces `<tool_call>…</tool_call>` with "[tool_call block]" and other XML-like tags
/// with "[tag]" / "[/tag]", so markup in the judged text cannot pose as instructions.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        if let Some(body) = after.strip_prefix("<tool_call>") {
            match body.find("</tool_call>") {
                Some(end) => {
                    out.push_str("[tool_call block]");
                    rest = &body[end + "</tool_call>".len()..];
                }
                None => {
                    out.push_str("[tool_call block]");
                    rest = "";
                }
            }
            continue;
        }
        match tag_len(after) {
            Some((len, closing)) => {
                out.push_str(if closing { "[/tag]" } else { "[tag]" });
                rest = &after[len..];
            }
            None => {
                out.push('<');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Length of a tag such as `<think>`, `</think>` or `<a href="x">` at the start of `s`.
fn tag_len(s: &str) -> Option<(usize, bool)> {
    let inner = s.strip_prefix('<')?;
    let (closing, inner) = match inner.strip_prefix('/') {
        Some(i) => (true, i),
        None => (false, inner),
    };
    let first = inner.chars().next()?;
    if !first.is_ascii_alphabetic() {
        return None;
    }
    let end = inner.find('>')?;
    if inner[..end].contains('<') || inner[..end].contains('\n') {
        return None;
    }
    Some((s.len() - inner.len() + end + 1, closing))
}
