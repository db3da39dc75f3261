//! The Packages index: the newest `metaclaw` for this machine's architecture.

use std::cmp::Ordering;

use crate::{deb822, version};

/// The package's name in the repository.
pub const PACKAGE: &str = "metaclaw";

/// The highest version of [`PACKAGE`] built for `arch` (or `all`).
pub fn newest(index: &str, arch: &str) -> Option<String> {
    deb822::stanzas(index)
        .iter()
        .filter(|s| deb822::field(s, "Package") == Some(PACKAGE))
        .filter(|s| matches!(deb822::field(s, "Architecture"), Some(a) if a == arch || a == "all"))
        .filter_map(|s| deb822::field(s, "Version").map(str::to_owned))
        .max_by(|a, b| version::compare(a, b))
}

/// Debian's name for the architecture this binary was built for.
pub fn this_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "i386",
        "arm" => "armhf",
        "riscv64" => "riscv64",
        other => other,
    }
}

/// Whether `available` is newer than `current`.
pub fn is_newer(available: &str, current: &str) -> bool {
    version::compare(available, current) == Ordering::Greater
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_for_this_architecture() {
        let index = "Package: metaclaw\nVersion: 0.1.0\nArchitecture: amd64\n\nPackage: metaclaw\nVersion: 0.3.0\nArchitecture: arm64\n\nPackage: metaclaw\nVersion: 0.2.0~beta1\nArchitecture: amd64\nDescription: x\n more\n\nPackage: other\nVersion: 9\nArchitecture: amd64\n";
        assert_eq!(newest(index, "amd64").as_deref(), Some("0.2.0~beta1"));
        assert_eq!(newest(index, "arm64").as_deref(), Some("0.3.0"));
        assert_eq!(newest(index, "i386"), None);
        assert!(is_newer("0.2.0~beta1", "0.1.0"));
        assert!(!is_newer("0.2.0~beta1", "0.2.0"));
    }
}
