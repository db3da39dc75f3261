//! `rl.*` and `opd.*` resolved into what the learning service needs: the backend, the base
//! model and its tokenizer directory, the judge, the teacher, the trainer's settings.

use std::path::PathBuf;

use metaclaw_learn::tokenizer::ModelSource;
use metaclaw_learn::{
    AdamParams, BackendSettings, CallObserver, JudgeConfig, LossConfig, LossFn, TeacherConfig,
    TrainerConfig,
};

use crate::config::{self, Config, Mode, RlBackend};
use crate::llm::calls::{self, Purpose, Usage};
use crate::paths::Paths;
use crate::secrets::{SecretError, SecretStore};

/// Secret account of the training backend's key (`rl.tinker_api_key` is its legacy name).
pub const RL_KEY: &str = "rl.api_key";
/// Secret account of the judge's key.
pub const PRM_KEY: &str = "rl.prm_api_key";
/// Secret account of the distillation teacher's key.
pub const TEACHER_KEY: &str = "opd.teacher_api_key";

/// Everything resolved; `Debug` leaves the keys out.
#[derive(Clone)]
pub struct RlSettings {
    /// Weight updates only inside training windows (`madmax`).
    pub windowed: bool,
    pub backend: BackendSettings,
    /// The LoRA's base model (`rl.model`, else `llm.model_id`).
    pub base_model: String,
    pub lora_rank: u32,
    /// `$METACLAW_HOME/models/<base model>`.
    pub model_dir: Option<PathBuf>,
    /// Where a missing tokenizer is downloaded from (`HF_ENDPOINT`, `HF_TOKEN`).
    pub model_source: ModelSource,
    pub home: PathBuf,
    pub db: PathBuf,
    pub trainer: TrainerConfig,
    pub max_steps: u64,
    pub resume_from: Option<String>,
    /// `None`: no judge configured; samples train with reward 0 (distillation only) or wait.
    pub judge: Option<JudgeConfig>,
    pub teacher: Option<TeacherConfig>,
    /// Default reply length when a request sets none.
    pub max_new_tokens: u32,
    /// The name replies carry when the request names no model.
    pub served_model: String,
}

impl std::fmt::Debug for RlSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RlSettings")
            .field("windowed", &self.windowed)
            .field("base_model", &self.base_model)
            .field("judge", &self.judge.as_ref().map(|j| &j.base_url))
            .finish_non_exhaustive()
    }
}

/// Whether `mode` trains weights.
pub fn wants_rl(mode: Mode) -> bool {
    matches!(mode, Mode::Rl | Mode::Madmax)
}

/// Resolves the settings. Blocking: reads the keychain.
pub fn resolve(
    config: &Config,
    paths: &Paths,
    secrets: &SecretStore,
) -> Result<RlSettings, SecretError> {
    let rl = &config.rl;
    let key = |account: &str| -> Result<Option<String>, SecretError> {
        Ok(secrets.get(account)?.map(|s| s.expose().to_string()))
    };
    let backend = BackendSettings {
        backend: match rl.backend {
            RlBackend::Auto => "auto",
            RlBackend::Tinker => "tinker",
            RlBackend::Mint => "mint",
            RlBackend::Weaver => "weaver",
        }
        .into(),
        api_key: key(RL_KEY)?,
        base_url: non_empty(&rl.base_url),
        tinker_api_key: None,
        tinker_base_url: None,
        env: Default::default(),
    }
    .with_process_env();
    let base_model = non_empty(&rl.model)
        .or_else(|| non_empty(&config.llm.model_id))
        .unwrap_or_default();
    let model_dir = metaclaw_learn::tokenizer::model_dir(&paths.home, &base_model).ok();
    let judge = non_empty(&rl.prm_url).map(|url| {
        Ok::<_, SecretError>(JudgeConfig {
            base_url: url,
            model: rl.prm_model.clone(),
            api_key: key(PRM_KEY)?,
            votes: u32::try_from(rl.prm_m).unwrap_or(u32::MAX),
            temperature: rl.prm_temperature as f32,
            max_tokens: rl.prm_max_new_tokens,
            on_call: Some(counted(Purpose::Judge)),
            ..JudgeConfig::default()
        })
    });
    let judge = judge.transpose()?;
    let opd = &config.opd;
    let teacher = if opd.enabled && !opd.teacher_url.trim().is_empty() {
        Some(TeacherConfig {
            base_url: opd.teacher_url.trim().to_string(),
            model: opd.teacher_model.clone(),
            api_key: key(TEACHER_KEY)?,
            on_call: Some(counted(Purpose::Distillation)),
            ..TeacherConfig::default()
        })
    } else {
        if opd.enabled {
            tracing::warn!("opd.enabled is on but opd.teacher_url is empty: distillation is off");
        }
        None
    };
    let loss = match rl.loss_fn {
        config::LossFn::ImportanceSampling => LossFn::ImportanceSampling,
        config::LossFn::Ppo => LossFn::Ppo,
        config::LossFn::Cispo => LossFn::Cispo,
    };
    Ok(RlSettings {
        windowed: config.mode == Mode::Madmax,
        backend,
        lora_rank: rl.lora_rank,
        model_dir,
        model_source: model_source(),
        home: paths.home.clone(),
        db: paths.db.clone(),
        trainer: TrainerConfig {
            batch_size: u32::try_from(rl.batch_size).unwrap_or(u32::MAX),
            loss: LossConfig::from(loss),
            adam: AdamParams {
                learning_rate: rl.learning_rate,
                ..AdamParams::default()
            },
            checkpoint_every: rl.checkpoint_every,
            judged_only: judge.is_some(),
            kl_coef: if teacher.is_some() {
                opd.kl_penalty_coef as f32
            } else {
                0.0
            },
        },
        max_steps: rl.max_steps,
        resume_from: non_empty(&rl.resume_from_ckpt),
        judge,
        teacher,
        max_new_tokens: rl.max_new_tokens.max(1),
        served_model: non_empty(&config.llm.model_id).unwrap_or_else(|| base_model.clone()),
        base_model,
    })
}

/// Hugging Face (or the mirror in `HF_ENDPOINT`), with `HF_TOKEN` for gated models.
pub fn model_source() -> ModelSource {
    let mut source = ModelSource::default();
    if let Some(url) = std::env::var("HF_ENDPOINT")
        .ok()
        .and_then(|u| non_empty(&u))
    {
        source.base_url = url;
    }
    source.token = std::env::var("HF_TOKEN").ok().and_then(|t| non_empty(&t));
    source
}

/// Counts each call of the judge or the teacher with learning's other calls, with the
/// tokens its answer reports.
fn counted(purpose: Purpose) -> CallObserver {
    CallObserver::new(move |answer| {
        calls::record(
            purpose,
            answer.is_some(),
            answer.map(Usage::of).unwrap_or_default(),
        );
    })
}

fn non_empty(s: &str) -> Option<String> {
    (!s.trim().is_empty()).then(|| s.trim().to_string())
}
