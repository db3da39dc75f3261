//! A token estimate for prompt text without a tokenizer, shared by everything that fills the
//! injected context block, so its parts are counted alike.

/// About four bytes of ASCII per token, and one token per other character (CJK text is close
/// to one token per character). Errs on the side of counting too many.
pub fn estimate_tokens(text: &str) -> usize {
    let (ascii, other) = text.chars().fold((0usize, 0usize), |(a, o), c| {
        if c.is_ascii() { (a + 1, o) } else { (a, o + 1) }
    });
    ascii.div_ceil(4) + other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_non_ascii_characters_fully() {
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("日本語"), 3);
        assert_eq!(estimate_tokens(""), 0);
    }
}
