//! `skills:` — the skill library, retrieval and evolution.

use serde::{Deserialize, Serialize};

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
        }
    }
}
