//! The verified Release text: that it is the channel asked for, and the SHA-256 and size of
//! the Packages index it vouches for.

use crate::deb822;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub sha256: String,
    pub size: u64,
}

/// The `SHA256` entry for `path` (e.g. `main/binary-amd64/Packages`), once the Release is
/// checked to be for `suite` (by Suite or Codename), so a signed index of another channel
/// cannot stand in for this one.
pub fn index_entry(release: &str, suite: &str, path: &str) -> Result<IndexEntry, String> {
    let stanzas = deb822::stanzas(release);
    let Some(stanza) = stanzas.first() else {
        return Err("the Release file is empty".into());
    };
    let names_suite = ["Suite", "Codename"]
        .iter()
        .any(|f| deb822::field(stanza, f) == Some(suite));
    if !names_suite {
        return Err(format!("the Release file is not for the channel {suite}"));
    }
    let sums = deb822::field(stanza, "SHA256").ok_or("the Release file has no SHA256 list")?;
    for line in sums.lines() {
        let mut parts = line.split_whitespace();
        if let (Some(hash), Some(size), Some(p)) = (parts.next(), parts.next(), parts.next())
            && p == path
        {
            return Ok(IndexEntry {
                sha256: hash.to_ascii_lowercase(),
                size: size.parse().map_err(|_| format!("bad size for {path}"))?,
            });
        }
    }
    Err(format!("the Release file does not list {path}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const RELEASE: &str = "Origin: MetaClaw\nSuite: stable\nCodename: stable\nComponents: main\nSHA256:\n 0123abcd 1234 main/binary-amd64/Packages\n ffff 99 main/binary-amd64/Packages.gz\n";

    #[test]
    fn finds_the_index_of_its_channel() {
        let e = index_entry(RELEASE, "stable", "main/binary-amd64/Packages").unwrap();
        assert_eq!(e.sha256, "0123abcd");
        assert_eq!(e.size, 1234);
        assert!(index_entry(RELEASE, "beta", "main/binary-amd64/Packages").is_err());
        assert!(index_entry(RELEASE, "stable", "main/binary-arm64/Packages").is_err());
    }
}
