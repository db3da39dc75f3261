//! `skills.sync:` — a skill library shared by a team through a git repository.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SkillsSync {
    /// Any git URL the user's own git reaches (SSH, HTTPS with a credential helper, or a
    /// path to a repository). Empty: no team library.
    pub remote: String,
    pub branch: String,
    /// Minutes between background syncs; 0: only `metaclaw skills sync` and after a skill
    /// is learned.
    pub interval_minutes: u32,
    /// This member's name in commits and in the second name of a conflicting version
    /// (`<skill>-<name>`). Empty: the login name.
    pub name: String,
}

impl Default for SkillsSync {
    fn default() -> Self {
        Self {
            remote: String::new(),
            branch: "main".into(),
            interval_minutes: 30,
            name: String::new(),
        }
    }
}

impl SkillsSync {
    /// Why `remote` cannot be used, if it cannot: one starting with `-` would reach git as
    /// an option (`--upload-pack=…` runs a command) instead of a URL.
    pub fn remote_problem(&self) -> Option<String> {
        let remote = self.remote.trim();
        remote.starts_with('-').then(|| {
            format!(
                "must be a git URL or a path, not {remote:?}: a remote starting with `-` \
                 would be read by git as an option"
            )
        })
    }

    /// The member name as a slug (lowercase letters, digits, dashes).
    pub fn member(&self) -> String {
        let raw = if self.name.trim().is_empty() {
            std::env::var("USER")
                .or_else(|_| std::env::var("USERNAME"))
                .unwrap_or_else(|_| "me".into())
        } else {
            self.name.clone()
        };
        let slug: String = raw
            .to_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        // Single hyphens only: a doubled one is not a valid Agent Skills name.
        let slug = slug
            .split('-')
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let slug = slug.chars().take(20).collect::<String>();
        let slug = slug.trim_end_matches('-');
        if slug.is_empty() {
            "me".into()
        } else {
            slug.to_owned()
        }
    }
}
