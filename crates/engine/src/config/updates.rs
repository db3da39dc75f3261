//! `updates:` — whether MetaClaw looks for a newer version, and where a build from source
//! looks. A package install reads the apt repository its package added; MetaClaw never
//! downloads or installs an update itself on Linux.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpdateCheck {
    /// At start and then once a day.
    #[default]
    Daily,
    Never,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UpdatesConfig {
    pub check: UpdateCheck,
    /// For a build from source (no apt source installed): a JSON manifest
    /// `{"version": "X"}` naming the newest release. Empty: such builds do not check.
    pub manifest_url: String,
}

impl UpdatesConfig {
    /// Why `manifest_url` cannot be used, if it cannot.
    pub fn manifest_problem(&self) -> Option<String> {
        let url = self.manifest_url.trim();
        let Some(rest) = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
        else {
            return (!url.is_empty())
                .then(|| format!("must be an http(s) URL or empty, not {url:?}"));
        };
        // The URL is shown in status and logs, so it may not carry a password; the manifest
        // is public metadata.
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        authority
            .contains('@')
            .then(|| "must not hold a user name or password (the manifest is public)".to_owned())
    }

    pub fn manifest_url(&self) -> Option<String> {
        let url = self.manifest_url.trim();
        (!url.is_empty()).then(|| url.to_owned())
    }
}
