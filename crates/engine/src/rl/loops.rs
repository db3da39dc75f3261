//! The background work: judging (and teacher logprobs), and training — as soon as a batch is
//! full in `rl`, inside training windows in `madmax`, and at once when asked ("Train now").

use std::sync::Arc;
use std::time::Duration;

use metaclaw_learn::{Judge, StepOutcome, StepRequest, Teacher};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::service::{Learning, lock, now_ms, ordering, pause};
use crate::events::EngineEvent;
use crate::schedule::Gate;
use crate::supervise::Supervisor;

/// How often due samples are looked at even when nothing announced them (a held sample's
/// retry time passing, a session ending by idle).
const JUDGE_EVERY: Duration = Duration::from_secs(15);
const TRAIN_CHECK_EVERY: Duration = Duration::from_secs(30);
/// Wait after a failed step before trying again (the batch is kept); the learning back-off
/// override (`METACLAW_LEARNING_BACKOFF_MS`) sets it too.
const AFTER_FAILURE: Duration = Duration::from_secs(30);
/// Samples judged per round.
const JUDGE_BATCH: u32 = 32;

/// The judge and the distillation teacher, built once from the settings. Rounds hold them
/// one at a time (the loop's and "Train now"'s), so no sample is judged twice at once.
pub(super) struct Graders {
    judge: Option<Judge>,
    teacher: Option<Teacher>,
}

impl Graders {
    pub(super) fn build(s: &super::RlSettings) -> Graders {
        let judge = match s.judge.clone().map(Judge::new).transpose() {
            Ok(j) => j,
            Err(e) => {
                tracing::warn!(error = %e, "the judge cannot be used; samples wait unjudged");
                None
            }
        };
        let teacher = match s.teacher.clone().map(Teacher::new).transpose() {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "the distillation teacher cannot be used");
                None
            }
        };
        if judge.is_none() {
            tracing::warn!("rl.prm_url is empty: no judge scores the samples");
        }
        Graders { judge, teacher }
    }
}

pub fn spawn_judge(learning: Learning, tasks: &Supervisor) {
    let shutdown = tasks.shutdown_token();
    tasks.spawn_restarting("rl judge", move || {
        let (learning, shutdown) = (learning.clone(), shutdown.clone());
        async move {
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = learning.inner.wake_judge.notified() => {}
                    () = tokio::time::sleep(JUDGE_EVERY) => {}
                }
                judge_round(&learning).await;
            }
        }
    });
}

/// Ends finished sessions' samples, judges what is due, adds teacher logprobs.
pub(super) async fn judge_round(learning: &Learning) {
    let inner = &learning.inner;
    let graders = inner.graders.lock().await;
    let (judge, teacher) = (graders.judge.as_ref(), graders.teacher.as_ref());
    let ended: Vec<String> = std::mem::take(&mut *lock(&inner.ended));
    for session in ended {
        if let Err(e) = inner.samples.end_session(&session) {
            tracing::warn!(error = %e, "could not mark a session's samples as ended");
        }
    }
    let mut error = None;
    let mut scored = 0;
    let mut teacher_scored = 0;
    if let Some(judge) = judge {
        match judge
            .judge_pending(&inner.samples, now_ms(), JUDGE_BATCH)
            .await
        {
            Ok(report) => {
                scored = report.scored;
                error = report.last_error;
            }
            Err(e) => error = Some(e.to_string()),
        }
    }
    if let Some(teacher) = teacher {
        match teacher.score_pending(&inner.samples, JUDGE_BATCH).await {
            Ok(report) => {
                teacher_scored = report.scored;
                error = error.or(report.last_error);
            }
            Err(e) => error = Some(e.to_string()),
        }
    }
    if let Some(e) = &error {
        tracing::warn!(error = %e, "judging samples failed; they are held and retried");
    }
    // A round with nothing due says nothing about the judge: the error of a held sample
    // stays shown until a judgement succeeds.
    if error.is_some() || scored > 0 || teacher_scored > 0 {
        *lock(&inner.judge_error) = error;
    }
    if scored > 0 {
        inner.wake_trainer.notify_one();
    }
}

/// Trains whenever a full batch is judged: at once (`rl`), or inside a window (`madmax`).
pub fn spawn_trainer(learning: Learning, gate: Gate, tasks: &Supervisor) {
    let shutdown = tasks.shutdown_token();
    tasks.spawn_restarting("rl trainer", move || {
        let (learning, gate, shutdown) = (learning.clone(), gate.clone(), shutdown.clone());
        async move {
            // Set after a failed step and its pause: try again at once rather than wait for
            // the next check as well.
            let mut retry = false;
            loop {
                if !std::mem::take(&mut retry) {
                    tokio::select! {
                        () = shutdown.cancelled() => return,
                        () = learning.inner.wake_trainer.notified() => {}
                        () = tokio::time::sleep(TRAIN_CHECK_EVERY) => {}
                    }
                }
                if !batch_ready(&learning) {
                    continue;
                }
                let permit = tokio::select! {
                    () = shutdown.cancelled() => return,
                    p = gate.permit("rl.trainer") => p,
                };
                // Steps while the window lasts and batches are full; the user returning stops
                // the step at its next safe point and keeps the batch.
                while batch_ready(&learning) && !permit.is_stopped() {
                    let stop = async {
                        tokio::select! {
                            () = permit.stopped() => {}
                            () = shutdown.cancelled() => {}
                        }
                    };
                    let batch = learning.settings().trainer.batch_size;
                    match run_step(&learning, batch, stop).await {
                        StepReport { status: "ok", .. } => {}
                        StepReport {
                            status: "error", ..
                        } => {
                            if !pause(after_failure(), &shutdown).await {
                                return;
                            }
                            retry = true;
                            break;
                        }
                        _ => break,
                    }
                }
            }
        }
    });
}

/// A full batch of judged samples waits, the trainer is up, and `rl.max_steps` is not reached.
fn batch_ready(learning: &Learning) -> bool {
    let inner = &learning.inner;
    let Some(ready) = inner.ready.get() else {
        return false;
    };
    let s = learning.settings();
    if u64::try_from(ready.trainer.status().step).unwrap_or(0) >= s.max_steps {
        return false;
    }
    let Ok(counts) = inner.samples.counts() else {
        return false;
    };
    let trainable = if s.trainer.judged_only {
        counts.waiting.saturating_sub(counts.unjudged)
    } else {
        counts.waiting
    };
    trainable >= u64::from(s.trainer.batch_size.max(1))
}

/// The answer of `POST /v1/admin/train_step` (the earlier contract's fields, plus loss).
#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    pub samples: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_reward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl StepReport {
    fn message(status: &'static str, message: String) -> Self {
        Self {
            status,
            step: None,
            samples: 0,
            mean_reward: None,
            loss: None,
            message: Some(message),
        }
    }
}

/// One step of at least `min_samples` judged samples, stopping early when `stop` fires.
pub(super) async fn run_step(
    learning: &Learning,
    min_samples: u32,
    stop: impl std::future::Future,
) -> StepReport {
    let inner = &learning.inner;
    let Some(ready) = inner.ready.get() else {
        return StepReport::message("error", "the training backend is not connected".into());
    };
    let trainer = Arc::clone(&ready.trainer);
    let request = StepRequest {
        skill_generation: i64::try_from(learning.generation()).unwrap_or(i64::MAX),
        min_samples,
    };
    inner.training.store(true, ordering());
    let outcome = trainer.step(request, stop).await;
    inner.training.store(false, ordering());
    match outcome {
        Ok(StepOutcome::Trained(m)) => {
            tracing::info!(step = m.step, samples = m.samples, mean_reward = m.mean_reward, loss = ?m.loss, "training step complete; the new weights are serving");
            inner.events.emit(EngineEvent::TrainingFinished {
                step: u64::try_from(m.step).unwrap_or(0),
                reward: Some(m.mean_reward),
            });
            StepReport {
                status: "ok",
                step: Some(m.step),
                samples: m.samples,
                mean_reward: Some(m.mean_reward),
                loss: m.loss,
                message: None,
            }
        }
        Ok(StepOutcome::Stopped { phase, samples, .. }) => {
            tracing::info!(
                ?phase,
                samples,
                "training step stopped (window closed); the batch waits for the next window"
            );
            StepReport {
                samples,
                ..StepReport::message(
                    "stopped",
                    "the training window closed; the batch is kept".into(),
                )
            }
        }
        Ok(StepOutcome::NotEnoughSamples { ready, needed, .. }) => StepReport {
            samples: ready,
            ..StepReport::message(
                "skipped",
                format!("{ready} judged sample(s) waiting; a step needs {needed}"),
            )
        },
        Err(e) => StepReport::message("error", e.to_string()),
    }
}

/// "Train now": judge what is due, then one step on whatever is judged (at least one sample),
/// window or not.
pub async fn train_now(learning: &Learning, shutdown: &CancellationToken) -> StepReport {
    judge_round(learning).await;
    run_step(learning, 1, shutdown.cancelled()).await
}

fn after_failure() -> Duration {
    std::env::var(crate::llm::pacing::BACKOFF_ENV)
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map_or(AFTER_FAILURE, Duration::from_millis)
}
