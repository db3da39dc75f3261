//! The apt source the package installed (`/etc/apt/sources.list.d/metaclaw.sources`, deb822):
//! where the repository is, which channel (suite), and the keyring it must be signed with.

use std::path::{Path, PathBuf};

use crate::error::UpdateError;

/// Where the package puts its source.
pub const SOURCES_PATH: &str = "/etc/apt/sources.list.d/metaclaw.sources";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AptSource {
    /// The repository's base URL, without a trailing `/`.
    pub uri: String,
    /// The channel: `stable`, `beta`.
    pub suite: String,
    pub component: String,
    /// The keyring its InRelease must verify with.
    pub keyring: PathBuf,
}

impl AptSource {
    /// Reads the source at `path`; `Ok(None)` when there is none (not installed from the
    /// package, or removed).
    pub fn read(path: &Path) -> Result<Option<AptSource>, UpdateError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text)
                .map(Some)
                .map_err(|why| UpdateError::Source {
                    path: path.to_owned(),
                    why,
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(UpdateError::Source {
                path: path.to_owned(),
                why: e.to_string(),
            }),
        }
    }

    /// The first enabled `deb` stanza of a deb822 sources file.
    pub fn parse(text: &str) -> Result<AptSource, String> {
        for stanza in crate::deb822::stanzas(text) {
            let field = |name: &str| crate::deb822::field(&stanza, name);
            let types = field("Types").unwrap_or_default();
            if !types.split_whitespace().any(|t| t == "deb") {
                continue;
            }
            if field("Enabled").is_some_and(|e| e.eq_ignore_ascii_case("no")) {
                continue;
            }
            let first = |name: &str| {
                field(name)
                    .and_then(|v| v.split_whitespace().next().map(str::to_owned))
                    .ok_or_else(|| format!("no {name}"))
            };
            let keyring = first("Signed-By")?;
            if !keyring.starts_with('/') {
                return Err("Signed-By must name a keyring file".into());
            }
            return Ok(AptSource {
                uri: first("URIs")?.trim_end_matches('/').to_owned(),
                suite: first("Suites")?,
                component: first("Components")?,
                keyring: PathBuf::from(keyring),
            });
        }
        Err("no enabled `Types: deb` entry".into())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn reads_the_packages_source() {
        let s = AptSource::parse(
            "# MetaClaw\nTypes: deb\nURIs: https://apt.example.org/metaclaw/\nSuites: beta\nComponents: main\nSigned-By: /usr/share/keyrings/metaclaw-archive-keyring.gpg\n",
        )
        .unwrap();
        assert_eq!(s.uri, "https://apt.example.org/metaclaw");
        assert_eq!(s.suite, "beta");
        assert_eq!(s.component, "main");
        assert_eq!(
            s.keyring,
            PathBuf::from("/usr/share/keyrings/metaclaw-archive-keyring.gpg")
        );
    }

    #[test]
    fn refuses_what_it_cannot_check() {
        assert!(AptSource::parse("Types: deb-src\nURIs: x\n").is_err());
        assert!(
            AptSource::parse("Types: deb\nURIs: http://x\nSuites: stable\nComponents: main\n")
                .unwrap_err()
                .contains("Signed-By")
        );
        assert!(
            AptSource::parse(
                "Types: deb\nURIs: http://x\nSuites: stable\nComponents: main\nSigned-By: -----BEGIN PGP\n"
            )
            .is_err()
        );
        assert!(
            AptSource::parse("Types: deb\nEnabled: no\nURIs: http://x\nSuites: s\nComponents: main\nSigned-By: /k\n")
                .is_err()
        );
    }

    #[test]
    fn a_missing_file_is_no_source() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            AptSource::read(&dir.path().join("none.sources")).unwrap(),
            None
        );
    }
}
