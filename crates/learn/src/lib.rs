//! Learning from weights: clients for Tinker-compatible training backends (Tinker, MinT,
//! Weaver) behind one [`Backend`] trait, backend selection, and the model's tokenizer and
//! chat template used to render prompts into the exact token ids that are sampled and
//! trained on.

mod backend;
mod error;
mod heartbeat;
mod http;
mod retry;
mod select;
pub mod tinker;
pub mod tokenizer;
mod types;
pub mod weaver;

pub use backend::{Backend, BackendFuture};
pub use error::LearnError;
pub use retry::RetryPolicy;
pub use select::{BackendChoice, BackendKind, BackendSettings, pick_backend};
pub use types::{
    AdamParams, Datum, ForwardBackwardOutput, LossConfig, LossFn, OptimOutput, SampleOutput,
    SampledSequence, Sampler, SamplerSource, SamplingParams, Stop, StopReason, TrainingRun,
};
