//! `memory:` — long-term memory units.

use serde::{Deserialize, Serialize};

use super::de;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryRetrieval {
    Keyword,
    /// Words and meaning fused (the source is `skills.embedding_source`).
    #[default]
    Hybrid,
    Embedding,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryConfig {
    #[serde(deserialize_with = "de::flexible_bool")]
    pub enabled: bool,
    /// Empty: under `$METACLAW_HOME`. `~` is expanded.
    pub dir: String,
    pub scope: String,
    pub retrieval_mode: MemoryRetrieval,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub use_embeddings: bool,
    pub embedding_mode: String,
    pub embedding_model: String,
    pub embedding_model_path: String,
    pub store_path: String,
    pub policy_path: String,
    pub telemetry_path: String,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub auto_upgrade_enabled: bool,
    pub auto_upgrade_interval_seconds: u64,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub auto_upgrade_require_review: bool,
    pub review_stale_after_hours: u64,
    pub max_injected_units: u32,
    /// Tokens for the standing-rules profile (the user's "always"/"never"/"from now on"
    /// rules and preferences) shown first on every turn; 0 turns it off. Each scope's
    /// policy starts from it.
    pub profile_tokens: u32,
    pub max_injected_tokens: u32,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub auto_extract: bool,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub auto_consolidate: bool,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub ignore_turn_type: bool,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub manual_trigger: bool,
    /// Let what retrieval finds tune each scope's retrieval policy in small, bounded,
    /// explained steps (see docs/memory.md). The earlier version's replay-based self-upgrade
    /// (`auto_upgrade_*`) is replaced by this; those keys are accepted and ignored.
    #[serde(deserialize_with = "de::flexible_bool")]
    pub adaptive_policy: bool,
    /// Extract every N buffered turns of a session, besides at its end.
    pub flush_every: u32,
    /// Wire protocol of the extraction model: `openai`, `anthropic`, or empty to inherit
    /// `llm.api`. Its key is the secret `memory.extractor_api_key`.
    #[serde(deserialize_with = "de::api_name")]
    pub extractor_api: String,
    /// Empty: `llm.api_base`. Without any model the rule-based extractor is used.
    #[serde(deserialize_with = "de::url")]
    pub extractor_api_base: String,
    /// Empty: `llm.model_id` (only with the inherited base).
    pub extractor_model: String,
    /// Documented by earlier READMEs but never implemented there; accepted so such configs load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sidecar_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consolidation_interval: Option<u64>,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            // On by default (the earlier version defaulted to off): remembering what the user
            // said is what people install this for. Everything stays in the local database.
            enabled: true,
            dir: String::new(),
            scope: "default".into(),
            retrieval_mode: MemoryRetrieval::Hybrid,
            use_embeddings: false,
            embedding_mode: "hashing".into(),
            embedding_model: "all-MiniLM-L6-v2".into(),
            embedding_model_path: "Qwen/Qwen3-Embedding-0.6B".into(),
            store_path: String::new(),
            policy_path: String::new(),
            telemetry_path: String::new(),
            auto_upgrade_enabled: false,
            auto_upgrade_interval_seconds: 900,
            auto_upgrade_require_review: true,
            review_stale_after_hours: 72,
            max_injected_units: 6,
            profile_tokens: 300,
            max_injected_tokens: 800,
            auto_extract: true,
            auto_consolidate: true,
            ignore_turn_type: false,
            manual_trigger: false,
            adaptive_policy: true,
            flush_every: 5,
            extractor_api: String::new(),
            extractor_api_base: String::new(),
            extractor_model: String::new(),
            sidecar_url: None,
            top_k: None,
            max_tokens: None,
            consolidation_interval: None,
        }
    }
}
