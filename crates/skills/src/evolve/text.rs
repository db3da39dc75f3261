//! Text helpers for the prompt: bounded excerpts and fences that the content cannot close.

/// `text` cut to at most `max` chars (plus a one-line marker): the head and the tail are kept,
/// since a task is stated at the start and its outcome at the end. Cuts fall on char
/// boundaries, and move to a nearby line break so lines stay whole when that costs little.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let head_chars = max * 3 / 5;
    let tail_chars = max - head_chars;
    let mut head_end = byte_at(text, head_chars);
    let mut tail_start = byte_at(text, total - tail_chars);
    // Snap to a line break in the last (first) quarter of the kept part, never past it.
    let slack = |n: usize| n / 4;
    if let Some(nl) = text[..head_end].rfind('\n')
        && text[nl..head_end].chars().count() <= slack(head_chars)
    {
        head_end = nl;
    }
    if let Some(nl) = text[tail_start..].find('\n')
        && text[tail_start..tail_start + nl].chars().count() <= slack(tail_chars)
    {
        tail_start += nl + 1;
    }
    let omitted = text[head_end..tail_start].chars().count();
    format!(
        "{}\n[… {omitted} chars omitted …]\n{}",
        text[..head_end].trim_end(),
        text[tail_start..].trim_start()
    )
}

/// One line cut to `max` chars with an ellipsis, indentation kept (it carries list nesting).
pub(crate) fn clip(line: &str, max: usize) -> String {
    let line = line.trim_end();
    match line.char_indices().nth(max) {
        Some((i, _)) => format!("{} …", &line[..i]),
        None => line.to_string(),
    }
}

/// Byte offset of the `n`th char (or the end).
fn byte_at(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

/// `text` in a code fence longer than any backtick run inside it, so quoted conversation
/// text cannot end the block early and pose as prompt instructions.
pub(crate) fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{text}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept() {
        assert_eq!(excerpt("  hello  ", 10), "hello");
    }

    #[test]
    fn long_text_keeps_head_and_tail_on_char_boundaries() {
        let text = "é".repeat(50) + &"字".repeat(50);
        let out = excerpt(&text, 20);
        assert!(out.starts_with(&"é".repeat(12)), "{out}");
        assert!(out.ends_with(&"字".repeat(8)), "{out}");
        assert!(out.contains("[… 80 chars omitted …]"), "{out}");
    }

    #[test]
    fn cuts_snap_to_line_breaks() {
        let text = (0..100).map(|i| format!("line {i:03}")).collect::<Vec<_>>();
        let out = excerpt(&text.join("\n"), 200);
        assert!(out.starts_with("line 000\n"), "{out}");
        for l in out.lines() {
            assert!(l.starts_with("line ") || l.starts_with("[…"), "{l:?}");
            assert!(l.len() == 8 || l.starts_with("[…"), "{l:?}");
        }
        assert!(out.ends_with("line 099"), "{out}");
    }

    #[test]
    fn clip_keeps_indentation() {
        assert_eq!(clip("   - a\t", 10), "   - a");
        assert_eq!(clip("  ééééé", 4), "  éé …");
    }

    #[test]
    fn fence_outlasts_inner_backticks() {
        assert_eq!(fenced("a"), "```\na\n```");
        assert_eq!(fenced("x ```` y"), "`````\nx ```` y\n`````");
    }
}
