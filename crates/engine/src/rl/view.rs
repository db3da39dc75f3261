//! `GET /api/learning`: what weight learning is doing, for the dashboard, `status` and the tray.

use metaclaw_learn::{Sampler, SamplerSource};
use metaclaw_store::{LearningStepRow, SampleCounts};
use serde::Serialize;

use super::service::{Learning, Link, lock, ordering};
use crate::config::Mode;

/// Steps shown on the dashboard's charts.
const STEPS_SHOWN: u32 = 500;

#[derive(Debug, Clone, Serialize)]
pub struct LearningView {
    pub mode: Mode,
    pub active: bool,
    pub backend: Option<&'static str>,
    pub model: String,
    /// `off`, `connecting`, `ready` or `unavailable`.
    pub state: &'static str,
    pub serving: Option<String>,
    pub training: bool,
    pub step: i64,
    pub samples: SampleCounts,
    pub judge_backlog: u64,
    pub served: Served,
    pub last_error: Option<String>,
    pub last_checkpoint: Option<String>,
    /// Oldest first.
    pub steps: Vec<LearningStepRow>,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Served {
    /// Turns the trained model answered.
    pub sampled: u64,
    /// Turns sent to the upstream LLM because the trained model could not answer.
    pub fallback: u64,
}

/// "base model", or the path of the trained weights serving.
pub fn sampler_label(sampler: &Sampler) -> String {
    match &sampler.source {
        SamplerSource::BaseModel(_) => "base model".into(),
        SamplerSource::Path(p) => p.clone(),
    }
}

/// The view with learning off in this mode: the history in the database is still shown.
pub fn off(mode: Mode, db: &std::path::Path) -> LearningView {
    let (samples, steps) = metaclaw_store::Store::open_read_only(db)
        .and_then(|s| Ok((s.sample_counts()?, s.learning_steps(STEPS_SHOWN)?)))
        .unwrap_or_default();
    LearningView {
        mode,
        active: false,
        backend: None,
        model: String::new(),
        state: "off",
        serving: None,
        training: false,
        step: steps.first().map_or(0, |s| s.step),
        judge_backlog: samples.unjudged,
        samples,
        served: Served::default(),
        last_error: None,
        last_checkpoint: None,
        steps: steps.into_iter().rev().collect(),
    }
}

impl Learning {
    pub fn view(&self, mode: Mode) -> LearningView {
        let inner = &self.inner;
        let (samples, mut steps) = inner
            .samples
            .with(|s| Ok((s.sample_counts()?, s.learning_steps(STEPS_SHOWN)?)))
            .unwrap_or_default();
        steps.reverse();
        let ready = inner.ready.get();
        let trainer = ready.map(|r| r.trainer.status());
        let link = self.link();
        let last_error = trainer
            .as_ref()
            .and_then(|t| t.last_error.clone())
            .or_else(|| match &link {
                Link::Unavailable(why) => Some(why.clone()),
                _ => None,
            })
            .or_else(|| lock(&inner.judge_error).clone());
        LearningView {
            mode,
            active: true,
            backend: ready.map(|r| r.backend.kind().as_str()).or_else(|| {
                metaclaw_learn::pick_backend(&inner.settings.backend)
                    .ok()
                    .map(|c| c.kind.as_str())
            }),
            model: inner.settings.base_model.clone(),
            state: match link {
                Link::Connecting => "connecting",
                Link::Ready => "ready",
                Link::Unavailable(_) => "unavailable",
            },
            serving: ready
                .and_then(|r| r.trainer.slot().current())
                .map(|s| sampler_label(&s)),
            training: inner.training.load(ordering()),
            step: trainer
                .as_ref()
                .map_or_else(|| steps.last().map_or(0, |s| s.step), |t| t.step),
            judge_backlog: samples.unjudged,
            samples,
            served: Served {
                sampled: inner.sampled.load(ordering()),
                fallback: inner.fallback.load(ordering()),
            },
            last_error,
            last_checkpoint: trainer.and_then(|t| t.last_checkpoint),
            steps,
        }
    }
}
