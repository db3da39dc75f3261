//! A memory unit and its vocabulary.

use serde::{Deserialize, Serialize};

/// What a unit records. The six kinds of the earlier version, kept for compatibility.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Something that happened in a conversation.
    Episodic,
    /// A lasting fact.
    Semantic,
    /// What the user likes, dislikes or wants done a certain way.
    Preference,
    /// The state of the user's project: stack, setup, decisions.
    ProjectState,
    /// A digest of the latest session.
    WorkingSummary,
    /// How the user works: rules such as "back up a file before editing it".
    ProceduralObservation,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Preference,
        Kind::ProjectState,
        Kind::ProceduralObservation,
        Kind::Semantic,
        Kind::WorkingSummary,
        Kind::Episodic,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Episodic => "episodic",
            Kind::Semantic => "semantic",
            Kind::Preference => "preference",
            Kind::ProjectState => "project_state",
            Kind::WorkingSummary => "working_summary",
            Kind::ProceduralObservation => "procedural_observation",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Active,
    /// Replaced by a newer unit (`superseded_by`); kept for history.
    Superseded,
    /// Forgotten (soft): hidden from retrieval, restorable, purgeable.
    Archived,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Superseded => "superseded",
            Status::Archived => "archived",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        [Status::Active, Status::Superseded, Status::Archived]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// How a unit came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Extracted from a conversation by the extraction model.
    Extracted,
    /// Extracted by the rule-based extractor (no model configured).
    Rules,
    /// Written by a person (CLI, admin API, UI).
    Manual,
    /// Imported from a JSONL export.
    Import,
    /// Stored through the compatibility API.
    Api,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Extracted => "extracted",
            Source::Rules => "rules",
            Source::Manual => "manual",
            Source::Import => "import",
            Source::Api => "api",
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        [
            Source::Extracted,
            Source::Rules,
            Source::Manual,
            Source::Import,
            Source::Api,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// A stored unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryUnit {
    /// Stable text id (time-ordered), what every API and export uses.
    pub id: String,
    pub scope: String,
    pub kind: Kind,
    /// The text injected into prompts.
    pub content: String,
    /// One line for listings; may be empty.
    pub summary: String,
    /// A normalised slot such as `pref:indentation`: a new value for the same slot
    /// supersedes the old unit instead of standing beside it.
    pub fact_key: Option<String>,
    /// 0..=1.
    pub importance: f32,
    /// 0..=1: how sure the extractor was.
    pub confidence: f32,
    /// Always injected first, never decayed or consolidated away.
    pub pinned: bool,
    pub status: Status,
    pub superseded_by: Option<String>,
    pub source: Source,
    pub source_session: Option<String>,
    pub source_turn: Option<u64>,
    pub tags: Vec<String>,
    pub entities: Vec<String>,
    pub access_count: u64,
    pub last_accessed_ms: Option<i64>,
    pub created_ms: i64,
    /// Changes on edits of content or metadata, never on access.
    pub updated_ms: i64,
    pub expires_ms: Option<i64>,
    /// Goes up by one on every change; the history keeps each version.
    pub version: u64,
}

/// What creating a unit needs; the store fills ids, timestamps, counters and version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewUnit {
    pub scope: String,
    pub kind: Kind,
    pub content: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub fact_key: Option<String>,
    pub importance: f32,
    pub confidence: f32,
    #[serde(default)]
    pub pinned: bool,
    pub source: Source,
    #[serde(default)]
    pub source_session: Option<String>,
    #[serde(default)]
    pub source_turn: Option<u64>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub entities: Vec<String>,
    #[serde(default)]
    pub expires_ms: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
        assert_eq!(Kind::parse("nonsense"), None);
        assert_eq!(Status::parse("archived"), Some(Status::Archived));
        assert_eq!(Source::parse("rules"), Some(Source::Rules));
    }
}
