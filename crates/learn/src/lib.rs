//! Learning from weights: clients for Tinker-compatible training backends (Tinker, MinT,
//! Weaver) behind one [`Backend`] trait, backend selection, and the model's tokenizer and
//! chat template used to render prompts into the exact token ids that are sampled and
//! trained on.
//!
//! Typical use by the trainer and the serving path:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use metaclaw_learn::tokenizer::ChatTokenizer;
//! use metaclaw_learn::*;
//! let settings = BackendSettings { backend: "auto".into(), api_key: Some("tml-…".into()), ..Default::default() }
//!     .with_process_env();
//! let backend = pick_backend(&settings)?.connect(RetryPolicy::default()).await?;
//! let run = backend.create_training_run("Qwen/Qwen3-4B", 32).await?;
//! let sampler = backend.create_sampler(&SamplerSource::BaseModel("Qwen/Qwen3-4B".into())).await?;
//! let tok = ChatTokenizer::from_dir(std::path::Path::new("/home/me/.metaclaw/models/Qwen/Qwen3-4B"))?;
//! let messages = [serde_json::json!({"role": "user", "content": "hi"})];
//! let prompt = tok.encode_chat(&messages, None, true, &Default::default())?;
//! let stop = Stop::Tokens(tok.token_id("<|im_end|>").into_iter().collect());
//! let out = backend.sample(&sampler, &prompt, &SamplingParams { stop, ..Default::default() }).await?;
//! // Train on exactly `prompt` + `out.sequences[0].tokens` with `out.sequences[0].logprobs`.
//! # let data: Vec<Datum> = Vec::new();
//! backend.forward_backward(&run, &data, LossFn::ImportanceSampling.into()).await?;
//! backend.optim_step(&run, AdamParams::default()).await?;
//! let path = backend.save_weights_for_sampler(&run, "step_0001").await?;
//! let _next = backend.create_sampler(&SamplerSource::Path(path)).await?;
//! # let _ = out;
//! # Ok(()) }
//! ```
//!
//! Learning from live turns ([`rl`]): the serving path stores each sampled turn as a
//! sample (the prompt ids and the exact sampled ids and logprobs) and attaches the next
//! turn as the judge's evidence; the [`Judge`] scores due samples; the [`Trainer`] runs a
//! step and swaps the [`SamplerSlot`] that serving reads:
//!
//! ```no_run
//! # async fn demo(backend: std::sync::Arc<dyn metaclaw_learn::Backend>,
//! #     run: metaclaw_learn::TrainingRun, base: metaclaw_learn::Sampler,
//! #     window_closes: impl std::future::Future<Output = ()>,
//! #     prompt: Vec<u32>, out: metaclaw_learn::SampledSequence)
//! #     -> Result<(), Box<dyn std::error::Error>> {
//! use metaclaw_learn::*;
//! use metaclaw_store::NewSample;
//! let samples = SampleStore::open(std::path::Path::new("/home/me/.metaclaw/metaclaw.db"))?;
//! let slot = SamplerSlot::new(Some(base));
//! // Serving: sample with `slot.current()`, then keep exactly what was sampled.
//! samples.insert(&NewSample {
//!     session_id: "s1".into(), turn_index: 1, skill_generation: 0,
//!     prompt_tokens: prompt, completion_tokens: out.tokens, completion_logprobs: out.logprobs,
//!     sampler_path: None, instruction: "…".into(), response_text: "…".into(), created_at_ms: 0,
//!     carried: Vec::new(),
//!     held_out: false,
//! })?;
//! samples.record_next_turn("s1", "the user's next message")?;
//! // Judging, then a step when the batch is full or a window opens.
//! let judge = Judge::new(JudgeConfig { base_url: "https://judge/v1".into(), ..Default::default() })?;
//! judge.judge_pending(&samples, 0, 64).await?;
//! let trainer = Trainer::new(backend, run, samples, slot, TrainerConfig::default())?;
//! let request = StepRequest { skill_generation: 0, min_samples: 4 };
//! match trainer.step(request, window_closes).await? {
//!     StepOutcome::Trained(metrics) => { let _ = metrics.mean_reward; }
//!     StepOutcome::Stopped { .. } | StepOutcome::NotEnoughSamples { .. } => {}
//! }
//! # Ok(()) }
//! ```

mod backend;
pub mod chat;
mod error;
mod heartbeat;
mod http;
pub mod reply;
mod retry;
pub mod rl;
mod select;
pub mod tinker;
pub mod tokenizer;
mod types;
pub mod weaver;

pub use backend::{Backend, BackendFuture};
pub use chat::normalize_messages;
pub use error::LearnError;
pub use heartbeat::Session;
pub use reply::{ParsedReply, ToolCall, parse_reply};
pub use retry::RetryPolicy;
pub use rl::advantage::{KlPenalty, build_datum, normalize_rewards};
pub use rl::judge::{Judge, JudgeConfig, JudgeReport, Verdict};
pub use rl::observe::CallObserver;
pub use rl::samples::SampleStore;
pub use rl::slot::SamplerSlot;
pub use rl::teacher::{Teacher, TeacherConfig, TeacherReport};
pub use rl::trainer::{
    StepMetrics, StepOutcome, StepRequest, StopPhase, Trainer, TrainerConfig, TrainerStatus,
};
pub use select::{BackendChoice, BackendKind, BackendSettings, pick_backend};
pub use types::{
    AdamParams, Datum, ForwardBackwardOutput, LossConfig, LossFn, OptimOutput, SampleOutput,
    SampledSequence, Sampler, SamplerSource, SamplingParams, Stop, StopReason, TrainingRun,
};
