//! `skills:` — the skill library, retrieval and evolution.

use serde::{Deserialize, Deserializer, Serialize};

use super::de;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillRetrieval {
    /// Lexical ranking (BM25); the name is kept from earlier versions.
    #[default]
    Template,
    Embedding,
    Hybrid,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SkillsConfig {
    #[serde(deserialize_with = "de::flexible_bool")]
    pub enabled: bool,
    /// Empty: `$METACLAW_HOME/skills`. `~` is expanded.
    pub dir: String,
    pub retrieval_mode: SkillRetrieval,
    pub top_k: u32,
    pub task_specific_top_k: u32,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub auto_evolve: bool,
    /// 0 disables the periodic trigger (session end still evolves).
    pub evolution_every_n_turns: u32,
    pub max_new_skills: u32,
    /// Wire protocol of the evolver model: `openai`, `anthropic`, or empty to inherit
    /// `llm.api`. Its key is the secret `skills.evolver_api_key`.
    #[serde(deserialize_with = "api_name")]
    pub evolver_api: String,
    /// Empty: `rl.evolver_api_base`, then `llm.api_base`.
    #[serde(deserialize_with = "de::url")]
    pub evolver_api_base: String,
    /// Empty: `rl.evolver_model`, then `llm.model_id` (only with the inherited base).
    pub evolver_model: String,
    /// OpenAI-compatible embeddings API. Empty: `llm.api_base` when `llm.api` is openai.
    /// Its key is the secret `skills.embedding_api_key`.
    #[serde(deserialize_with = "de::url")]
    pub embedding_api_base: String,
    /// Empty: `text-embedding-3-small` (used by the embedding and hybrid retrieval modes).
    pub embedding_model: String,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            dir: String::new(),
            retrieval_mode: SkillRetrieval::Template,
            // Fewer than the earlier version's 6/10: a few skills that fit beat a dozen that
            // might (see the retrieval evaluation in crates/skills/tests).
            top_k: 3,
            task_specific_top_k: 2,
            auto_evolve: true,
            evolution_every_n_turns: 10,
            max_new_skills: 3,
            evolver_api: String::new(),
            evolver_api_base: String::new(),
            evolver_model: String::new(),
            embedding_api_base: String::new(),
            embedding_model: String::new(),
        }
    }
}

/// `skills.evolver_api`: a typo must fail at load, not silently pick the wrong protocol. A
/// visitor (see `de::CheckedStr`) so the error names the key.
fn api_name<'d, D: Deserializer<'d>>(d: D) -> Result<String, D::Error> {
    d.deserialize_str(de::CheckedStr(check_api))
}

fn check_api(s: &str) -> Result<(), String> {
    match s {
        "" | "openai" | "anthropic" => Ok(()),
        other => Err(format!(
            "must be openai, anthropic, or empty to use llm.api; got `{other}`"
        )),
    }
}
