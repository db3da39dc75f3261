//! A secret value that cannot leak through `Debug`, logs or error messages.

use std::fmt;

/// Deliberately neither `Display` nor `Serialize`: reading the value takes an explicit
/// [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Safe to show a person: see [`mask`].
    pub fn masked(&self) -> String {
        mask(&self.0)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(****)")
    }
}

/// First 4 and last 4 characters; short values would be guessable from that, so they are
/// hidden entirely.
pub fn mask(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() < 12 {
        return "****".into();
    }
    let head: String = chars.iter().take(4).collect();
    let tail: String = chars.iter().skip(chars.len() - 4).collect();
    format!("{head}****{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_hides_debug() {
        assert_eq!(mask("sk-abcdefghijklmnop"), "sk-a****mnop");
        assert_eq!(mask("short-key11"), "****");
        assert_eq!(mask(""), "****");
        let s = Secret::new("sk-abcdefghijklmnop");
        assert_eq!(format!("{s:?}"), "Secret(****)");
        assert_eq!(format!("{:?}", Some(&s)), "Some(Secret(****))");
    }
}
