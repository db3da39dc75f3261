//! One training step: take a batch → datums → forward_backward → optim_step → save for
//! sampler → new sampler into the [`SamplerSlot`], plus a checkpoint every N steps.
//!
//! Every backend call is awaited and its error returned and kept as the trainer's last
//! error. A stop signal is honoured before forward_backward and before optim_step: the
//! step ends cleanly and the batch stays waiting. Samples are marked consumed right after
//! the optimizer step applied them (one transaction), so a later failure (saving, swapping)
//! never trains them twice. A batch stopped after forward_backward left gradients on the
//! backend; the next step finishes that same batch with optim_step alone rather than adding
//! a second forward_backward on top of it. A step whose new weights could not be saved for
//! sampling is recorded with its error, and the next call saves them before training more.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use metaclaw_store::{FinishedStep, NewLearningStep, SampleRow};
use serde::Serialize;

use crate::backend::Backend;
use crate::error::LearnError;
use crate::rl::advantage::{KlPenalty, build_datum, normalize_rewards};
use crate::rl::samples::SampleStore;
use crate::rl::slot::SamplerSlot;
use crate::rl::stop::StopSignal;
use crate::types::{AdamParams, Datum, LossConfig, SamplerSource, TrainingRun};

#[derive(Debug, Clone)]
pub struct TrainerConfig {
    /// Most samples per step (`rl.batch_size`).
    pub batch_size: u32,
    pub loss: LossConfig,
    pub adam: AdamParams,
    /// Save the full training state every this many steps (0 = never).
    pub checkpoint_every: u32,
    /// Train only on samples the judge has scored (true whenever a judge is configured);
    /// without a judge every sample trains with reward 0 (useful with distillation only).
    pub judged_only: bool,
    /// Per-token KL weight toward the teacher (`opd.kl_coef`); 0 = no distillation.
    pub kl_coef: f32,
}

impl Default for TrainerConfig {
    fn default() -> Self {
        Self {
            batch_size: 4,
            loss: LossConfig::default(),
            adam: AdamParams::default(),
            checkpoint_every: 5,
            judged_only: true,
            kl_coef: 0.0,
        }
    }
}

/// What the step should train on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepRequest {
    /// The current skill generation; waiting samples of older generations are dropped.
    pub skill_generation: i64,
    /// Fewest samples worth a step (`batch_size` in `rl` mode, 1 for a manual step).
    pub min_samples: u32,
}

/// Where a stopped step stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopPhase {
    BeforeForwardBackward,
    BeforeOptimStep,
}

/// A completed step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepMetrics {
    pub step: i64,
    pub samples: usize,
    pub dropped: u64,
    pub mean_reward: f64,
    pub loss: Option<f64>,
    pub duration: Duration,
    pub sampler_path: String,
    pub checkpoint_path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum StepOutcome {
    Trained(StepMetrics),
    /// The stop signal fired; the batch's samples are still waiting.
    Stopped {
        phase: StopPhase,
        samples: usize,
        dropped: u64,
    },
    /// Fewer samples than asked for are ready.
    NotEnoughSamples {
        ready: usize,
        needed: u32,
        dropped: u64,
    },
}

/// The trainer's state for status displays.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TrainerStatus {
    /// The last completed step (0 = none).
    pub step: i64,
    /// The error of the latest step, cleared by the next completed step.
    pub last_error: Option<String>,
    pub last_checkpoint: Option<String>,
}

pub struct Trainer {
    backend: Arc<dyn Backend>,
    run: TrainingRun,
    samples: SampleStore,
    slot: SamplerSlot,
    config: TrainerConfig,
    status: Mutex<TrainerStatus>,
    /// Sample ids whose gradients the backend holds from a step stopped before optim_step.
    pending_gradients: Mutex<Option<Vec<i64>>>,
    /// The optimizer applied a step whose weights never reached the serving sampler.
    sampler_stale: std::sync::atomic::AtomicBool,
    /// One step at a time.
    running: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("run", &self.run.model_id)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl Trainer {
    /// A trainer on an existing training run; the step counter continues from the database.
    pub fn new(
        backend: Arc<dyn Backend>,
        run: TrainingRun,
        samples: SampleStore,
        slot: SamplerSlot,
        config: TrainerConfig,
    ) -> Result<Self, LearnError> {
        let (step, last_checkpoint) =
            samples.with(|s| Ok((s.last_learning_step()?, s.latest_checkpoint()?)))?;
        Ok(Self {
            backend,
            run,
            samples,
            slot,
            config,
            status: Mutex::new(TrainerStatus {
                step,
                last_error: None,
                last_checkpoint,
            }),
            pending_gradients: Mutex::new(None),
            sampler_stale: std::sync::atomic::AtomicBool::new(false),
            running: tokio::sync::Mutex::new(()),
        })
    }

    pub fn status(&self) -> TrainerStatus {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn slot(&self) -> &SamplerSlot {
        &self.slot
    }

    pub fn run(&self) -> &TrainingRun {
        &self.run
    }

    /// Restores weights and optimizer state from a `save_state` path
    /// (`rl.resume_from_ckpt`, or the latest checkpoint in the database), then serves
    /// from the restored weights.
    pub async fn resume(&self, path: &str) -> Result<(), LearnError> {
        let result = async {
            self.backend.load_state(&self.run, path, true).await?;
            let name = format!("resume_{:06}", self.status().step);
            let sampler_path = self
                .backend
                .save_weights_for_sampler(&self.run, &name)
                .await?;
            let sampler = self
                .backend
                .create_sampler(&SamplerSource::Path(sampler_path))
                .await?;
            self.slot.replace(sampler);
            Ok(())
        }
        .await;
        self.note(result)
    }

    /// Runs one step unless `stop` fires first (checked before forward_backward and
    /// before optim_step).
    pub async fn step(
        &self,
        request: StepRequest,
        stop: impl Future,
    ) -> Result<StepOutcome, LearnError> {
        let _one = self.running.lock().await;
        let result = self.step_inner(request, StopSignal::new(stop)).await;
        self.note(result)
    }

    fn note<T>(&self, result: Result<T, LearnError>) -> Result<T, LearnError> {
        if let Err(e) = &result {
            tracing::warn!(error = %e, "training step failed");
            self.status
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .last_error = Some(e.to_string());
        }
        result
    }

    async fn step_inner<F: Future>(
        &self,
        request: StepRequest,
        mut stop: StopSignal<F>,
    ) -> Result<StepOutcome, LearnError> {
        let started = Instant::now();
        if self.sampler_stale.load(Ordering::SeqCst) {
            // Serve what the last applied step trained before training more.
            let name = format!("step_{:06}_refresh", self.status().step);
            self.swap_sampler(&name).await?;
            // The failure that left the weights unserved is mended.
            self.status
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .last_error = None;
        }
        let (batch, dropped, have_gradients) = self.batch(request)?;
        if batch.len() < request.min_samples.max(1) as usize {
            return Ok(StepOutcome::NotEnoughSamples {
                ready: batch.len(),
                needed: request.min_samples.max(1),
                dropped,
            });
        }
        let stopped = |phase| StepOutcome::Stopped {
            phase,
            samples: batch.len(),
            dropped,
        };
        let rewards: Vec<f64> = batch.iter().map(|s| s.reward().unwrap_or(0.0)).collect();
        let mut loss = None;
        if !have_gradients {
            let datums = self.datums(&batch, &rewards)?;
            if stop.fired() {
                return Ok(stopped(StopPhase::BeforeForwardBackward));
            }
            let out = self
                .backend
                .forward_backward(&self.run, &datums, self.config.loss)
                .await?;
            loss = out.loss();
            *self.pending_gradients() = Some(batch.iter().map(|s| s.id).collect());
        }
        if stop.fired() {
            return Ok(stopped(StopPhase::BeforeOptimStep));
        }
        self.backend.optim_step(&self.run, self.config.adam).await?;
        *self.pending_gradients() = None;
        let step = self.status().step + 1;
        let ids: Vec<i64> = batch.iter().map(|s| s.id).collect();
        let mean_reward = rewards.iter().sum::<f64>() / rewards.len() as f64;
        // The batch and the step's row are written together, before anything else can fail
        // or the process stop; the row is completed once the new weights are saved.
        self.samples.consume_with_step(
            &ids,
            &NewLearningStep {
                step,
                at_ms: now_ms(),
                samples: batch.len() as u64,
                dropped,
                mean_reward,
                loss,
                duration_ms: started.elapsed().as_millis() as u64,
                sampler_path: None,
                checkpoint_path: None,
                error: None,
            },
        )?;
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .step = step;

        // The batch is applied: whatever fails from here is recorded with the step.
        let name = format!("step_{step:06}");
        let every = i64::from(self.config.checkpoint_every);
        let mut failure = None;
        self.sampler_stale.store(true, Ordering::SeqCst);
        let sampler_path = match self.swap_sampler(&name).await {
            Ok(path) => Some(path),
            Err(e) => {
                failure = Some(e);
                None
            }
        };
        let mut checkpoint_path = None;
        if failure.is_none() && every > 0 && step % every == 0 {
            match self.backend.save_state(&self.run, &name).await {
                Ok(path) => checkpoint_path = Some(path),
                Err(e) => failure = Some(e),
            }
        }
        let duration = started.elapsed();
        self.samples.finish_step(&FinishedStep {
            step,
            duration_ms: duration.as_millis() as u64,
            sampler_path: sampler_path.clone(),
            checkpoint_path: checkpoint_path.clone(),
            error: failure.as_ref().map(ToString::to_string),
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        let Some(sampler_path) = sampler_path else {
            return Err(LearnError::invalid("step", "no sampler was saved"));
        };
        let metrics = StepMetrics {
            step,
            samples: batch.len(),
            dropped,
            mean_reward,
            loss,
            duration,
            sampler_path,
            checkpoint_path: checkpoint_path.clone(),
        };
        let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        status.last_error = None;
        if checkpoint_path.is_some() {
            status.last_checkpoint = checkpoint_path;
        }
        tracing::info!(
            step,
            samples = metrics.samples,
            mean_reward = metrics.mean_reward,
            "training step complete"
        );
        Ok(StepOutcome::Trained(metrics))
    }

    /// Saves the current weights for sampling and makes them the serving sampler.
    async fn swap_sampler(&self, name: &str) -> Result<String, LearnError> {
        let path = self
            .backend
            .save_weights_for_sampler(&self.run, name)
            .await?;
        let sampler = self
            .backend
            .create_sampler(&SamplerSource::Path(path.clone()))
            .await?;
        self.slot.replace(sampler);
        self.sampler_stale.store(false, Ordering::SeqCst);
        Ok(path)
    }

    /// The batch to train: the one whose gradients the backend already holds (if all its
    /// samples are still waiting), else the oldest waiting samples of the generation.
    fn batch(&self, request: StepRequest) -> Result<(Vec<SampleRow>, u64, bool), LearnError> {
        let take = self.samples.take_batch(
            request.skill_generation,
            self.config.batch_size.max(1),
            self.config.judged_only,
        )?;
        let held = self.pending_gradients().clone();
        if let Some(ids) = held {
            let mut rows = Vec::with_capacity(ids.len());
            for id in &ids {
                match self.samples.get(*id)? {
                    Some(row) if row.status == metaclaw_store::SampleStatus::Waiting => {
                        rows.push(row)
                    }
                    _ => break,
                }
            }
            if rows.len() == ids.len() {
                return Ok((rows, take.dropped, true));
            }
            // The backend's gradients belong to samples no longer trainable: the next
            // forward_backward adds to them, which cannot be undone without a reset call.
            tracing::warn!("gradients of a stopped step are applied with the next batch");
            *self.pending_gradients() = None;
        }
        Ok((take.samples, take.dropped, false))
    }

    fn datums(&self, batch: &[SampleRow], rewards: &[f64]) -> Result<Vec<Datum>, LearnError> {
        let advantages = normalize_rewards(rewards);
        batch
            .iter()
            .zip(advantages)
            .map(|(s, adv)| {
                let kl = match (&s.teacher_logprobs, self.config.kl_coef) {
                    (Some(t), coef) if coef > 0.0 => Some(KlPenalty {
                        teacher_logprobs: t,
                        coef,
                    }),
                    _ => None,
                };
                build_datum(
                    &s.prompt_tokens,
                    &s.completion_tokens,
                    &s.completion_logprobs,
                    adv as f32,
                    kl,
                )
            })
            .collect()
    }

    fn pending_gradients(&self) -> std::sync::MutexGuard<'_, Option<Vec<i64>>> {
        self.pending_gradients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
