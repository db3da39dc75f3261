//! `rl:` and `opd:` — weight training through a Tinker-compatible backend.

use serde::{Deserialize, Serialize};

use super::de;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RlBackend {
    #[default]
    Auto,
    Tinker,
    Mint,
    Weaver,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossFn {
    #[default]
    ImportanceSampling,
    Ppo,
    Cispo,
}

/// API family of the judge and evolver models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelProvider {
    #[default]
    Openai,
    Bedrock,
}

/// Secrets (`rl.api_key`, `rl.prm_api_key`, `rl.evolver_api_key`) are not fields: they live in
/// the secret store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RlConfig {
    #[serde(deserialize_with = "de::flexible_bool")]
    pub enabled: bool,
    pub backend: RlBackend,
    #[serde(deserialize_with = "de::url")]
    pub base_url: String,
    /// Legacy name of `base_url`; folded into it on load.
    #[serde(skip_serializing, deserialize_with = "legacy_url")]
    pub(super) tinker_base_url: Option<String>,
    /// LoRA base model; empty falls back to `llm.model_id`.
    pub model: String,
    pub lora_rank: u32,
    #[serde(deserialize_with = "de::positive")]
    pub batch_size: u64,
    pub max_steps: u64,
    pub learning_rate: f64,
    pub loss_fn: LossFn,
    pub save_weights_timeout_s: u64,
    pub resume_from_ckpt: String,
    /// Save the full training state every this many steps (0: never).
    pub checkpoint_every: u32,
    /// Reply length cap when the agent's request sets none.
    pub max_new_tokens: u32,
    #[serde(deserialize_with = "de::flexible_bool")]
    pub manual_train_trigger: bool,
    pub prm_provider: ModelProvider,
    #[serde(deserialize_with = "de::url")]
    pub prm_url: String,
    pub prm_model: String,
    #[serde(deserialize_with = "de::positive")]
    pub prm_m: u64,
    pub prm_temperature: f64,
    pub prm_max_new_tokens: u32,
    pub evolver_provider: ModelProvider,
    /// Empty: `llm.api_base`.
    #[serde(deserialize_with = "de::url")]
    pub evolver_api_base: String,
    /// Empty: `llm.model_id`.
    pub evolver_model: String,
    /// Programmatic rollout: a directory with `<split>.jsonl` tasks; empty = off.
    pub openclaw_env_data_dir: String,
    pub openclaw_env_split: String,
    #[serde(deserialize_with = "de::positive")]
    pub openclaw_env_concurrency: u64,
    #[serde(deserialize_with = "de::positive")]
    pub openclaw_env_max_steps: u64,
}

impl Default for RlConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            backend: RlBackend::Auto,
            base_url: String::new(),
            tinker_base_url: None,
            model: String::new(),
            lora_rank: 32,
            batch_size: 4,
            max_steps: 1000,
            learning_rate: 1e-4,
            loss_fn: LossFn::ImportanceSampling,
            save_weights_timeout_s: 200,
            resume_from_ckpt: String::new(),
            checkpoint_every: 10,
            max_new_tokens: 2048,
            manual_train_trigger: false,
            prm_provider: ModelProvider::Openai,
            prm_url: "https://api.openai.com/v1".into(),
            prm_model: "gpt-5.2".into(),
            prm_m: 3,
            prm_temperature: 0.6,
            prm_max_new_tokens: 1024,
            evolver_provider: ModelProvider::Openai,
            evolver_api_base: String::new(),
            evolver_model: String::new(),
            openclaw_env_data_dir: String::new(),
            openclaw_env_split: "train".into(),
            openclaw_env_concurrency: 4,
            openclaw_env_max_steps: 15,
        }
    }
}

fn legacy_url<'d, D: serde::Deserializer<'d>>(d: D) -> Result<Option<String>, D::Error> {
    de::url(d).map(Some)
}

/// On-policy distillation: a per-token KL penalty from a teacher model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpdConfig {
    #[serde(deserialize_with = "de::flexible_bool")]
    pub enabled: bool,
    #[serde(deserialize_with = "de::url")]
    pub teacher_url: String,
    pub teacher_model: String,
    pub kl_penalty_coef: f64,
}

impl Default for OpdConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            teacher_url: String::new(),
            teacher_model: String::new(),
            kl_penalty_coef: 1.0,
        }
    }
}
