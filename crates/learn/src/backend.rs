//! The [`Backend`] trait every training backend implements.
//!
//! It is object-safe (methods return boxed futures rather than `async fn`) because the
//! backend is chosen at run time from the configuration (`rl.backend: auto`), and the
//! trainer, the serving path and the admin surfaces share one `Arc<dyn Backend>`.
//!
//! Every method completes only when the backend has finished the work (the server-side
//! future is polled to its end) and returns its error otherwise: nothing is fire-and-forget.

use std::future::Future;
use std::pin::Pin;

use crate::error::LearnError;
use crate::select::BackendKind;
use crate::types::{
    AdamParams, Datum, ForwardBackwardOutput, LossConfig, OptimOutput, SampleOutput, Sampler,
    SamplerSource, SamplingParams, TrainingRun,
};

/// The future every backend call returns.
pub type BackendFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, LearnError>> + Send + 'a>>;

pub trait Backend: Send + Sync {
    fn kind(&self) -> BackendKind;

    /// Creates a LoRA training run on `base_model` with the given rank.
    fn create_training_run<'a>(
        &'a self,
        base_model: &'a str,
        lora_rank: u32,
    ) -> BackendFuture<'a, TrainingRun>;

    /// Computes the loss and accumulates its gradients (applied by [`Self::optim_step`]).
    fn forward_backward<'a>(
        &'a self,
        run: &'a TrainingRun,
        data: &'a [Datum],
        loss: LossConfig,
    ) -> BackendFuture<'a, ForwardBackwardOutput>;

    /// Applies the accumulated gradients with Adam.
    fn optim_step<'a>(
        &'a self,
        run: &'a TrainingRun,
        params: AdamParams,
    ) -> BackendFuture<'a, OptimOutput>;

    /// Saves the current weights for sampling under `name`; returns their path.
    fn save_weights_for_sampler<'a>(
        &'a self,
        run: &'a TrainingRun,
        name: &'a str,
    ) -> BackendFuture<'a, String>;

    /// Opens a sampling session on saved weights or on the base model.
    fn create_sampler<'a>(&'a self, source: &'a SamplerSource) -> BackendFuture<'a, Sampler>;

    /// Samples continuations of `prompt`, with each sampled token's logprob.
    fn sample<'a>(
        &'a self,
        sampler: &'a Sampler,
        prompt: &'a [u32],
        params: &'a SamplingParams,
    ) -> BackendFuture<'a, SampleOutput>;

    /// Saves the full training state (weights and optimizer) under `name`; returns its path.
    fn save_state<'a>(&'a self, run: &'a TrainingRun, name: &'a str) -> BackendFuture<'a, String>;

    /// Restores a checkpoint saved by [`Self::save_state`]; with `with_optimizer` the
    /// optimizer moments too (a true resume).
    fn load_state<'a>(
        &'a self,
        run: &'a TrainingRun,
        path: &'a str,
        with_optimizer: bool,
    ) -> BackendFuture<'a, ()>;
}
