//! One skill: a `SKILL.md` with YAML frontmatter and a Markdown body.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The documented categories; any other string still loads, with a warning.
pub const CATEGORIES: &[&str] = &[
    "coding",
    "debugging",
    "research",
    "data_analysis",
    "security",
    "communication",
    "automation",
    "agentic",
    "productivity",
    "common_mistakes",
    "general",
];

/// Where a skill came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Shipped in the binary's built-in bank.
    Builtin,
    /// Written or edited by the user.
    #[default]
    User,
    /// Written by the evolver from the user's conversations.
    Evolved,
    /// Brought in by `metaclaw skills import` (a folder or a `.zip` of skill folders).
    Imported,
    /// Received from the team library (`skills.sync.remote`).
    Team,
}

impl Source {
    /// As written in a file: `builtin`, `user`, `evolved`, `imported`, `team`.
    pub fn key(self) -> &'static str {
        match self {
            Source::Builtin => "builtin",
            Source::User => "user",
            Source::Evolved => "evolved",
            Source::Imported => "imported",
            Source::Team => "team",
        }
    }

    /// How people read it: `built-in`, `user`, `evolved`, `imported`, `team`.
    pub fn word(self) -> &'static str {
        match self {
            Source::Builtin => "built-in",
            Source::User => "user",
            Source::Evolved => "evolved",
            Source::Imported => "imported",
            Source::Team => "team",
        }
    }
}

/// How an evolved skill came to be.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// Sessions whose turns the evolver read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<String>,
    /// RFC 3339 time of the evolution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The evolver model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The skill this one improves, when it replaced an earlier version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub improves: Option<String>,
    /// The library's generation when the skill was exported (it counts content changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// Where an imported or team skill came from (a path, an archive, a remote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The user's own requests the skill was learned from (as the reader took them out of
    /// the agent's wrapping). Retrieval reads them too, so the skill comes back for that kind
    /// of task whatever words the learning model chose for its description.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<String>,
}

/// Frontmatter MetaClaw does not use but keeps, so a skill written by another tool (a
/// `license`, ClawHub's `version` and `metadata.openclaw`) loses nothing in the library, in
/// an export or in the team library.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extra {
    pub license: Option<String>,
    pub compatibility: Option<String>,
    /// Space-separated tool names (experimental in the specification).
    pub allowed_tools: Option<String>,
    /// `metadata` entries that are not MetaClaw's, and other tools' top-level keys, as
    /// strings (a nested value as JSON).
    pub metadata: BTreeMap<String, String>,
}

impl Skill {
    /// The requests an evolved skill was learned from (see [`Provenance::requests`]).
    pub fn requests(&self) -> &[String] {
        self.provenance
            .as_ref()
            .map_or(&[][..], |p| p.requests.as_slice())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Lowercase slug (`[a-z0-9][a-z0-9-]*`), unique in a library; the folder's name.
    pub name: String,
    /// One line saying when the skill applies.
    pub description: String,
    /// `coding`, `debugging`, `research`, `data_analysis`, `security`, `communication`,
    /// `automation`, `agentic`, `productivity`, `common_mistakes`, or `general`.
    pub category: String,
    pub tags: Vec<String>,
    /// Injected on every main turn regardless of the query.
    pub always: bool,
    /// A disabled skill stays on disk but is never retrieved.
    pub disabled: bool,
    pub source: Source,
    pub provenance: Option<Provenance>,
    /// The Markdown after the frontmatter, trimmed.
    pub body: String,
    pub extra: Extra,
    /// The file it was read from, when it came from disk.
    pub path: Option<PathBuf>,
}
