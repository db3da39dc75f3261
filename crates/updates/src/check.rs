//! One update check: from the apt repository when the package's source is there, else from
//! the manifest a source build names, else nowhere (said as such).

use std::path::PathBuf;

use serde::Serialize;

use crate::apt_source::AptSource;
use crate::packages::is_newer;
use crate::{apt, manifest, version};

/// How to apply an update from the package's repository: MetaClaw never installs on Linux.
pub const APPLY_APT: &str =
    "your system's updater, or: sudo apt update && sudo apt upgrade metaclaw";
/// How to apply an update to a build from source.
pub const APPLY_SOURCE: &str = "git pull && ./scripts/install.sh";

#[derive(Debug, Clone)]
pub struct Sources {
    /// The package's apt source file ([`crate::SOURCES_PATH`]).
    pub apt_sources: PathBuf,
    /// `updates.manifest_url`, for builds from source.
    pub manifest_url: Option<String>,
}

impl Default for Sources {
    fn default() -> Self {
        Self {
            apt_sources: PathBuf::from(crate::SOURCES_PATH),
            manifest_url: None,
        }
    }
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The running version.
    pub current: String,
    /// A newer version, when there is one.
    pub available: Option<String>,
    /// The newest version the source offers (equal to or older than `current` too).
    pub newest: Option<String>,
    /// `apt`, `manifest` or `none`.
    pub source: &'static str,
    /// Where it looked: the repository and channel, or the manifest's URL.
    pub from: Option<String>,
    /// How to apply `available`.
    pub apply: Option<&'static str>,
    /// Why the check could not tell (no update is reported then).
    pub error: Option<String>,
}

/// Checks once. Never fails: what went wrong is in [`Outcome::error`].
pub async fn check(client: &reqwest::Client, sources: &Sources) -> Outcome {
    let current = version::current().to_owned();
    let mut outcome = Outcome {
        current: current.clone(),
        available: None,
        newest: None,
        source: "none",
        from: None,
        apply: None,
        error: None,
    };
    let found = match AptSource::read(&sources.apt_sources) {
        Err(e) => {
            outcome.source = "apt";
            Err(e)
        }
        Ok(Some(source)) => {
            outcome.source = "apt";
            outcome.from = Some(format!("{} ({})", source.uri, source.suite));
            apt::newest(client, &source).await
        }
        Ok(None) => match &sources.manifest_url {
            Some(url) => {
                outcome.source = "manifest";
                outcome.from = Some(url.clone());
                manifest::newest(client, url).await.map(Some)
            }
            None => return outcome,
        },
    };
    match found {
        Ok(newest) => {
            outcome.available = newest.clone().filter(|n| is_newer(n, &current));
            outcome.newest = newest;
            if outcome.available.is_some() {
                outcome.apply = Some(if outcome.source == "apt" {
                    APPLY_APT
                } else {
                    APPLY_SOURCE
                });
            }
        }
        Err(e) => outcome.error = Some(e.to_string()),
    }
    outcome
}
