//! Backend-neutral data types: training runs, datums, loss and optimizer settings, samplers
//! and sampling results.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::LearnError;

/// A LoRA training run on a backend. Clones share the request counter, so every request
/// of the run gets the next sequence id whichever clone sends it.
#[derive(Debug, Clone)]
pub struct TrainingRun {
    pub model_id: String,
    pub base_model: String,
    pub lora_rank: u32,
    next_seq: Arc<AtomicU64>,
}

impl TrainingRun {
    /// A run whose first request will carry sequence id `first_seq`.
    pub fn new(model_id: String, base_model: String, lora_rank: u32, first_seq: u64) -> Self {
        Self {
            model_id,
            base_model,
            lora_rank,
            next_seq: Arc::new(AtomicU64::new(first_seq)),
        }
    }

    /// Takes the next request sequence id.
    pub(crate) fn take_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::SeqCst)
    }

    /// Gives `seq` back after the server refused its request (it never ran), so the next
    /// request does not leave a gap the server would wait on forever. Only possible while
    /// no later id has been taken.
    pub(crate) fn release_seq(&self, seq: u64) {
        let _ = self
            .next_seq
            .compare_exchange(seq + 1, seq, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// A sampling session bound to one set of weights.
#[derive(Debug, Clone)]
pub struct Sampler {
    pub id: String,
    /// The weights it samples from (`tinker://…` path or the base model name).
    pub source: SamplerSource,
    next_seq: Arc<AtomicU64>,
}

impl Sampler {
    pub fn new(id: String, source: SamplerSource) -> Self {
        Self {
            id,
            source,
            next_seq: Arc::new(AtomicU64::new(0)),
        }
    }

    pub(crate) fn take_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::SeqCst)
    }
}

/// What a sampler samples from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SamplerSource {
    /// Weights saved with [`crate::Backend::save_weights_for_sampler`].
    Path(String),
    /// The untrained base model.
    BaseModel(String),
}

/// The loss computed by the backend during forward_backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LossFn {
    #[default]
    ImportanceSampling,
    Ppo,
    Cispo,
}

impl LossFn {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ImportanceSampling => "importance_sampling",
            Self::Ppo => "ppo",
            Self::Cispo => "cispo",
        }
    }
}

impl std::str::FromStr for LossFn {
    type Err = LearnError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "importance_sampling" => Ok(Self::ImportanceSampling),
            "ppo" => Ok(Self::Ppo),
            "cispo" => Ok(Self::Cispo),
            other => Err(LearnError::invalid(
                "loss function",
                format!("`{other}` (expected importance_sampling, ppo or cispo)"),
            )),
        }
    }
}

/// Loss function plus its optional clip thresholds (ppo and cispo only; `None` keeps the
/// server defaults).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LossConfig {
    pub loss_fn: LossFn,
    pub clip_low_threshold: Option<f32>,
    pub clip_high_threshold: Option<f32>,
}

impl From<LossFn> for LossConfig {
    fn from(loss_fn: LossFn) -> Self {
        Self {
            loss_fn,
            ..Self::default()
        }
    }
}

/// One training example. Position `i` of `input_tokens` predicts `target_tokens[i]`; the
/// `logprobs` are the sampler's logprobs of those targets and `advantages` their weights
/// (0 for prompt positions and masked tokens). All four have the same length.
#[derive(Debug, Clone, PartialEq)]
pub struct Datum {
    input_tokens: Vec<u32>,
    target_tokens: Vec<u32>,
    logprobs: Vec<f32>,
    advantages: Vec<f32>,
}

impl Datum {
    /// Checks lengths and finiteness, so a malformed datum fails here with a clear message
    /// rather than on the server.
    pub fn new(
        input_tokens: Vec<u32>,
        target_tokens: Vec<u32>,
        logprobs: Vec<f32>,
        advantages: Vec<f32>,
    ) -> Result<Self, LearnError> {
        let n = input_tokens.len();
        if n == 0 {
            return Err(LearnError::invalid("datum", "no input tokens"));
        }
        for (name, len) in [
            ("target_tokens", target_tokens.len()),
            ("logprobs", logprobs.len()),
            ("advantages", advantages.len()),
        ] {
            if len != n {
                return Err(LearnError::invalid(
                    "datum",
                    format!("{name} has {len} entries, input has {n}"),
                ));
            }
        }
        if logprobs.iter().chain(&advantages).any(|v| !v.is_finite()) {
            return Err(LearnError::invalid(
                "datum",
                "a logprob or advantage is not finite",
            ));
        }
        Ok(Self {
            input_tokens,
            target_tokens,
            logprobs,
            advantages,
        })
    }

    pub fn input_tokens(&self) -> &[u32] {
        &self.input_tokens
    }
    pub fn target_tokens(&self) -> &[u32] {
        &self.target_tokens
    }
    pub fn logprobs(&self) -> &[f32] {
        &self.logprobs
    }
    pub fn advantages(&self) -> &[f32] {
        &self.advantages
    }
}

/// Adam optimizer settings; the defaults are the Tinker SDK's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamParams {
    pub learning_rate: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
    pub grad_clip_norm: f64,
}

impl Default for AdamParams {
    fn default() -> Self {
        Self {
            learning_rate: 1e-4,
            beta1: 0.9,
            beta2: 0.95,
            eps: 1e-12,
            weight_decay: 0.0,
            grad_clip_norm: 0.0,
        }
    }
}

/// Result of forward_backward: per-datum logprobs of the targets under the current weights,
/// and metrics named `name:reduction` (`loss:sum`, …).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForwardBackwardOutput {
    pub logprobs: Vec<Vec<f32>>,
    pub metrics: BTreeMap<String, f64>,
}

impl ForwardBackwardOutput {
    /// The summed loss, when the backend reported it.
    pub fn loss(&self) -> Option<f64> {
        self.metrics.get("loss:sum").copied()
    }
}

/// Result of an optimizer step (metrics may be empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptimOutput {
    pub metrics: BTreeMap<String, f64>,
}

/// When sampling stops besides `max_tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Stop {
    /// The model's end-of-sequence token (the server's implicit stop).
    #[default]
    Eos,
    /// Any of these strings.
    Strings(Vec<String>),
    /// Any of these token ids.
    Tokens(Vec<u32>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SamplingParams {
    pub max_tokens: u32,
    pub temperature: f32,
    /// `None` = no top-k cut.
    pub top_k: Option<u32>,
    /// `None` = no nucleus cut.
    pub top_p: Option<f32>,
    pub stop: Stop,
    /// Number of sequences to sample.
    pub n: u32,
    pub seed: Option<u64>,
}

impl Default for SamplingParams {
    fn default() -> Self {
        Self {
            max_tokens: 2048,
            temperature: 0.7,
            top_k: None,
            top_p: None,
            stop: Stop::Eos,
            n: 1,
            seed: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// A stop token or string (or EOS) ended the sequence.
    Stop,
    /// `max_tokens` ended the sequence.
    Length,
}

/// One sampled sequence: the exact tokens and the sampler's logprob of each.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledSequence {
    pub tokens: Vec<u32>,
    pub logprobs: Vec<f32>,
    pub stop_reason: StopReason,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SampleOutput {
    pub sequences: Vec<SampledSequence>,
}
