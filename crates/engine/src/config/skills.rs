//! `skills:` — the skill library, retrieval and evolution.

use serde::{Deserialize, Deserializer, Serialize};

use super::de;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillRetrieval {
    /// Lexical ranking (BM25); the name is kept from earlier versions.
    Template,
    Embedding,
    /// Lexical and by meaning, fused: the default since the local model needs no provider.
    #[default]
    Hybrid,
}

/// Where the vectors of retrieval by meaning (skills and memory) come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbeddingSource {
    /// `api` when `skills.embedding_api_base` is set, else `local`.
    #[default]
    Auto,
    /// The local model in `$METACLAW_HOME/models/embeddings/`: no call per query.
    Local,
    /// The OpenAI-compatible embeddings API (`skills.embedding_api_base`, else an openai
    /// `llm.api_base`): a paid call per query.
    Api,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SkillsConfig {
    #[serde(deserialize_with = "de::flexible_bool")]
    pub enabled: bool,
    /// Empty: `$METACLAW_HOME/skills`. `~` is expanded.
    pub dir: String,
    /// `template` (lexical), `embedding` (cosine to the query) or `hybrid` (both fused, the
    /// default). Until the vectors are in (the local model downloaded and loaded), and on any
    /// failure, retrieval is lexical.
    pub retrieval_mode: SkillRetrieval,
    /// `auto`, `local` or `api`: see [`EmbeddingSource`]. Memory uses the same source.
    pub embedding_source: EmbeddingSource,
    /// Fetch the default local model in the background at start when it is missing.
    #[serde(deserialize_with = "de::flexible_bool")]
    pub embedding_download: bool,
    pub top_k: u32,
    pub task_specific_top_k: u32,
    /// Tokens the user's learned one-sentence rules may take on every turn, shown whole
    /// ahead of other skills while they fit (like `memory.profile_tokens`); 0 leaves them to
    /// relevance.
    pub standing_tokens: u32,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub auto_evolve: bool,
    /// 0 disables the periodic trigger (session end still evolves).
    pub evolution_every_n_turns: u32,
    pub max_new_skills: u32,
    /// `auto`: a learned skill goes live at once; `ask`: it waits as a proposal until the
    /// user approves it (`skills/.proposals/`).
    pub review: metaclaw_skills::evolve::Review,
    /// Wire protocol of the evolver model: `openai`, `anthropic`, or empty to inherit
    /// `llm.api`. Its key is the secret `skills.evolver_api_key`.
    #[serde(deserialize_with = "de::api_name")]
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
    /// The API's model. Empty: `text-embedding-3-small`. (The local model is the one in
    /// `$METACLAW_HOME/models/embeddings/`; see `metaclaw models status`.)
    pub embedding_model: String,
    /// Cosine a skill needs to be injected in `embedding` mode (and to be a candidate on the
    /// semantic side of `hybrid`), from -1 to 1.
    #[serde(deserialize_with = "similarity")]
    pub min_similarity: f32,
    /// How long a turn waits for its query's embedding before falling back to lexical
    /// retrieval for that turn.
    #[serde(deserialize_with = "de::positive")]
    pub embedding_timeout_ms: u64,
    /// A team library through git (`skills.sync.*`).
    pub sync: super::SkillsSync,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            dir: String::new(),
            retrieval_mode: SkillRetrieval::Hybrid,
            embedding_source: EmbeddingSource::Auto,
            embedding_download: true,
            // Fewer than the earlier version's 6/10: a few skills that fit beat a dozen that
            // might (see the retrieval evaluation in crates/skills/tests).
            top_k: 3,
            task_specific_top_k: 2,
            standing_tokens: 300,
            auto_evolve: true,
            evolution_every_n_turns: 10,
            max_new_skills: 3,
            review: metaclaw_skills::evolve::Review::Auto,
            evolver_api: String::new(),
            evolver_api_base: String::new(),
            evolver_model: String::new(),
            embedding_api_base: String::new(),
            embedding_model: String::new(),
            // OpenAI's text-embedding-3 models put a query that restates a skill's purpose
            // at about 0.35-0.6 and unrelated English text mostly below 0.25; 0.3 keeps the
            // former. Other models have other scales, hence the knob.
            min_similarity: 0.3,
            // An embeddings call usually answers in 100-300 ms; a turn should never pay
            // more than a second for skills.
            embedding_timeout_ms: 1000,
            sync: super::SkillsSync::default(),
        }
    }
}

impl SkillsConfig {
    /// `embedding_source` with `auto` decided.
    pub fn embedding_source(&self) -> EmbeddingSource {
        match self.embedding_source {
            EmbeddingSource::Auto if self.embedding_api_base.trim().is_empty() => {
                EmbeddingSource::Local
            }
            EmbeddingSource::Auto => EmbeddingSource::Api,
            chosen => chosen,
        }
    }
}

/// `skills.min_similarity`: a cosine, so only -1..=1 means anything. A visitor, like those
/// in `de`, so the error names the key and line.
fn similarity<'d, D: Deserializer<'d>>(d: D) -> Result<f32, D::Error> {
    d.deserialize_f64(Cosine)
}

struct Cosine;

impl serde::de::Visitor<'_> for Cosine {
    type Value = f32;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a cosine between -1 and 1")
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<f32, E> {
        if (-1.0..=1.0).contains(&v) {
            Ok(v as f32)
        } else {
            Err(E::invalid_value(serde::de::Unexpected::Float(v), &self))
        }
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<f32, E> {
        self.visit_f64(v as f64)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<f32, E> {
        self.visit_f64(v as f64)
    }
}
