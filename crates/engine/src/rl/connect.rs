//! Bringing the trained model up in the background: the tokenizer (downloaded once into
//! `$METACLAW_HOME/models/`), the backend session, the LoRA training run, the base sampler,
//! and a resume from the latest checkpoint. Until it is up, turns go to the upstream LLM.

use std::sync::Arc;
use std::time::Duration;

use metaclaw_learn::tokenizer::{ChatTokenizer, download_tokenizer};
use metaclaw_learn::{RetryPolicy, SamplerSlot, SamplerSource, Trainer, pick_backend};
use tokio_util::sync::CancellationToken;

use super::service::{Learning, Link, Ready, pause};

/// First wait before connecting again; doubles up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_secs(5);
const MAX_RETRY: Duration = Duration::from_secs(300);

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
                learning.set_link(Link::Unavailable(why));
                if !pause(wait, &shutdown).await {
                    return;
                }
                wait = (wait * 2).min(MAX_RETRY);
            }
        }
    }
}

async fn connect(learning: &Learning) -> Result<Ready, String> {
    let s = learning.settings();
    if s.base_model.is_empty() {
        return Err("no base model: set rl.model (for example Qwen/Qwen3-4B)".into());
    }
    let choice = pick_backend(&s.backend).map_err(|e| e.to_string())?;
    let tokenizer = Arc::new(load_tokenizer(learning).await?);
    let backend = choice
        .connect(RetryPolicy::default())
        .await
        .map_err(|e| format!("{} at {}: {e}", choice.kind.display_name(), choice.base_url))?;
    let run = backend
        .create_training_run(&s.base_model, s.lora_rank)
        .await
        .map_err(|e| format!("creating the LoRA training run failed: {e}"))?;
    let base = backend
        .create_sampler(&SamplerSource::BaseModel(s.base_model.clone()))
        .await
        .map_err(|e| format!("opening a sampler on {} failed: {e}", s.base_model))?;
    let trainer = Trainer::new(
        backend.clone(),
        run,
        learning.inner.samples.clone(),
        SamplerSlot::new(Some(base)),
        s.trainer.clone(),
    )
    .map_err(|e| e.to_string())?;
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
async fn load_tokenizer(learning: &Learning) -> Result<ChatTokenizer, String> {
    let s = learning.settings();
    let Some(dir) = s.model_dir.clone() else {
        return Err(format!("`{}` is not a model id", s.base_model));
    };
    if !dir.join("tokenizer.json").exists() {
        tracing::info!(model = %s.base_model, dir = %dir.display(), "downloading the model's tokenizer");
        download_tokenizer(&s.model_source, &s.home, &s.base_model)
            .await
            .map_err(|e| {
                format!(
                    "the tokenizer of {} is missing and could not be downloaded ({e}); run `metaclaw models download {}`",
                    s.base_model, s.base_model
                )
            })?;
    }
    tokio::task::spawn_blocking(move || ChatTokenizer::from_dir(&dir))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}
