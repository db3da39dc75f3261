//! Bringing the trained model up in the background: the tokenizer (downloaded once into
//! `$METACLAW_HOME/models/`), the backend session, the LoRA training run, the base sampler,
//! and a resume from the latest checkpoint. Until it is up, turns go to the upstream LLM.

use std::sync::Arc;
use std::time::Duration;

use metaclaw_learn::tokenizer::{ChatTokenizer, TokenizerError, download_tokenizer};
use metaclaw_learn::{LearnError, RetryPolicy, SamplerSlot, SamplerSource, Trainer, pick_backend};
use tokio_util::sync::CancellationToken;

use super::service::{Learning, Link, Ready, pause};

/// First wait before connecting again; doubles up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_secs(5);
const MAX_RETRY: Duration = Duration::from_secs(300);

/// Why the trained model is not up: logged, and shown in status until the next attempt.
#[derive(Debug, thiserror::Error)]
enum ConnectError {
    #[error("no base model: set rl.model (for example Qwen/Qwen3-4B)")]
    NoBaseModel,
    #[error("`{0}` is not a model id")]
    NotAModelId(String),
    /// `rl.backend` and its settings name no usable backend.
    #[error(transparent)]
    Backend(LearnError),
    #[error("{kind} at {url}: {source}")]
    Connect {
        kind: &'static str,
        url: String,
        source: LearnError,
    },
    #[error("creating the LoRA training run failed: {0}")]
    TrainingRun(LearnError),
    #[error("opening a sampler on {model} failed: {source}")]
    Sampler { model: String, source: LearnError },
    #[error(transparent)]
    Trainer(LearnError),
    #[error(
        "the tokenizer of {model} is missing and could not be downloaded ({source}); run `metaclaw models download {model}`"
    )]
    Download {
        model: String,
        source: TokenizerError,
    },
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
}

/// Connects until it works or the engine stops; then wakes the workers.
pub async fn connect_until_ready(learning: Learning, shutdown: CancellationToken) {
    let mut wait = FIRST_RETRY;
    loop {
        match connect(&learning).await {
            Ok(ready) => {
                let serving = ready
                    .trainer
                    .slot()
                    .current()
                    .map(|s| super::view::sampler_label(&s))
                    .unwrap_or_default();
                if learning.inner.ready.set(ready).is_ok() {
                    learning.set_link(Link::Ready);
                    tracing::info!(serving = %serving, "the trained model is serving");
                }
                learning.inner.wake_judge.notify_one();
                learning.inner.wake_trainer.notify_one();
                return;
            }
            Err(why) => {
                tracing::warn!(
                    retry_in_s = wait.as_secs(),
                    "weight learning is not available: {why}"
                );
                learning.set_link(Link::Unavailable(why.to_string()));
                if !pause(wait, &shutdown).await {
                    return;
                }
                wait = (wait * 2).min(MAX_RETRY);
            }
        }
    }
}

async fn connect(learning: &Learning) -> Result<Ready, ConnectError> {
    let s = learning.settings();
    if s.base_model.is_empty() {
        return Err(ConnectError::NoBaseModel);
    }
    let choice = pick_backend(&s.backend).map_err(ConnectError::Backend)?;
    let tokenizer = Arc::new(load_tokenizer(learning).await?);
    let backend = choice
        .connect(RetryPolicy::default())
        .await
        .map_err(|source| ConnectError::Connect {
            kind: choice.kind.display_name(),
            url: choice.base_url.clone(),
            source,
        })?;
    let run = backend
        .create_training_run(&s.base_model, s.lora_rank)
        .await
        .map_err(ConnectError::TrainingRun)?;
    let base = backend
        .create_sampler(&SamplerSource::BaseModel(s.base_model.clone()))
        .await
        .map_err(|source| ConnectError::Sampler {
            model: s.base_model.clone(),
            source,
        })?;
    let trainer = Trainer::new(
        backend.clone(),
        run,
        learning.inner.samples.clone(),
        SamplerSlot::new(Some(base)),
        s.trainer.clone(),
    )
    .map_err(ConnectError::Trainer)?;
    let resume = s
        .resume_from
        .clone()
        .or_else(|| trainer.status().last_checkpoint);
    if let Some(path) = resume {
        // A checkpoint that cannot be loaded costs the trained weights, not the service.
        match trainer.resume(&path).await {
            Ok(()) => tracing::info!(checkpoint = %path, "resumed training from the checkpoint"),
            Err(e) => {
                tracing::warn!(checkpoint = %path, error = %e, "could not resume from the checkpoint; serving the base model")
            }
        }
    }
    let mut stop_ids = Vec::new();
    let mut end_markers = Vec::new();
    let eos = tokenizer.eos_token().map(str::to_owned);
    for marker in [
        "<|im_end|>",
        "<|endoftext|>",
        "<|eot_id|>",
        "<|im_end_of_turn|>",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain(eos)
    {
        if let Some(id) = tokenizer.token_id(&marker)
            && !stop_ids.contains(&id)
        {
            stop_ids.push(id);
            end_markers.push(marker);
        }
    }
    Ok(Ready {
        backend,
        tokenizer,
        trainer: Arc::new(trainer),
        stop_ids,
        end_markers,
    })
}

/// The base model's tokenizer, downloaded first if it is not there yet.
async fn load_tokenizer(learning: &Learning) -> Result<ChatTokenizer, ConnectError> {
    let s = learning.settings();
    let Some(dir) = s.model_dir.clone() else {
        return Err(ConnectError::NotAModelId(s.base_model.clone()));
    };
    if !dir.join("tokenizer.json").exists() {
        tracing::info!(model = %s.base_model, dir = %dir.display(), "downloading the model's tokenizer");
        download_tokenizer(&s.model_source, &s.home, &s.base_model)
            .await
            .map_err(|source| ConnectError::Download {
                model: s.base_model.clone(),
                source,
            })?;
    }
    Ok(tokio::task::spawn_blocking(move || ChatTokenizer::from_dir(&dir)).await??)
}
