//! The trainer end to end against the fake Tinker backend and the fake judge: sampled
//! turns → samples → judge → one step → the slot serves the new weights; a backend outage,
//! a stop between forward_backward and optim_step, a restart in the middle of a batch,
//! checkpoints and resume.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::future::{pending, poll_fn};
use std::path::Path;
use std::sync::Arc;
use std::task::Poll;

use common::{fake, fast_policy, tinker};
use metaclaw_e2e::fake_judge::FakeJudge;
use metaclaw_e2e::fake_tinker::{FakeTinker, FakeTinkerOptions, Fault, FutureScript};
use metaclaw_learn::{
    Backend, Judge, JudgeConfig, RetryPolicy, SampleStore, SamplerSlot, SamplerSource,
    SamplingParams, StepOutcome, StepRequest, StopPhase, Trainer, TrainerConfig, TrainingRun,
};
use metaclaw_store::{NewSample, SampleStatus};

const BASE: &str = "Qwen/Qwen3-4B";
const REQ: StepRequest = StepRequest {
    skill_generation: 0,
    min_samples: 2,
};

struct Setup {
    fake: FakeTinker,
    judge_fake: FakeJudge,
    backend: Arc<dyn Backend>,
    run: TrainingRun,
    slot: SamplerSlot,
    dir: tempfile::TempDir,
}

impl Setup {
    async fn new(policy: RetryPolicy) -> Self {
        let fake = fake(FakeTinkerOptions::default()).await;
        let client = tinker(&fake, policy).await;
        let backend: Arc<dyn Backend> = Arc::new(client);
        let run = backend.create_training_run(BASE, 8).await.unwrap();
        let base = backend
            .create_sampler(&SamplerSource::BaseModel(BASE.into()))
            .await
            .unwrap();
        Self {
            fake,
            judge_fake: FakeJudge::start().await.unwrap(),
            backend,
            run,
            slot: SamplerSlot::new(Some(base)),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn db(&self) -> std::path::PathBuf {
        self.dir.path().join("metaclaw.db")
    }

    fn trainer(&self, store: &SampleStore, checkpoint_every: u32) -> Trainer {
        Trainer::new(
            self.backend.clone(),
            self.run.clone(),
            store.clone(),
            self.slot.clone(),
            TrainerConfig {
                batch_size: 2,
                checkpoint_every,
                ..TrainerConfig::default()
            },
        )
        .unwrap()
    }

    /// Serves a turn through the current sampler and stores it as a sample, with the
    /// follow-up as evidence.
    async fn turn(&self, store: &SampleStore, turn: i64, follow_up: &str) -> i64 {
        let sampler = self.slot.current().unwrap();
        let prompt = vec![1, 2, 3, turn as u32];
        let params = SamplingParams {
            max_tokens: 5,
            seed: Some(turn as u64),
            ..SamplingParams::default()
        };
        let out = self
            .backend
            .sample(&sampler, &prompt, &params)
            .await
            .unwrap();
        let seq = &out.sequences[0];
        let id = store
            .insert(&NewSample {
                session_id: "s1".into(),
                turn_index: turn,
                skill_generation: 0,
                prompt_tokens: prompt,
                completion_tokens: seq.tokens.clone(),
                completion_logprobs: seq.logprobs.clone(),
                sampler_path: None,
                instruction: format!("task {turn}"),
                response_text: format!("reply {turn}"),
                created_at_ms: turn,
                carried: Vec::new(),
                held_out: false,
            })
            .unwrap();
        store.record_next_turn("s1", follow_up).unwrap();
        id
    }

    async fn judge(&self, store: &SampleStore) {
        let judge = Judge::new(JudgeConfig {
            base_url: self.judge_fake.base_url(),
            model: "judge".into(),
            ..JudgeConfig::default()
        })
        .unwrap();
        let report = judge.judge_pending(store, 0, 100).await.unwrap();
        assert_eq!(report.held, 0);
    }
}

fn status_of(store: &SampleStore, id: i64) -> SampleStatus {
    store.get(id).unwrap().unwrap().status
}

fn open(path: &Path) -> SampleStore {
    SampleStore::open(path).unwrap()
}

#[tokio::test]
async fn a_step_trains_on_judged_samples_and_swaps_the_sampler() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    s.judge_fake.push_reply("Score: 1");
    s.judge_fake.push_reply("Score: 1");
    s.judge_fake.push_reply("Score: 1");
    s.judge_fake.set_default_reply("Score: -1");
    let a = s.turn(&store, 1, "thanks").await;
    let b = s.turn(&store, 2, "wrong").await;
    s.judge(&store).await;
    assert_eq!(store.get(a).unwrap().unwrap().reward(), Some(1.0));
    assert_eq!(store.get(b).unwrap().unwrap().reward(), Some(-1.0));

    let trainer = s.trainer(&store, 1);
    let old = s.slot.current().unwrap();
    let outcome = trainer.step(REQ, pending::<()>()).await.unwrap();
    let StepOutcome::Trained(m) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!((m.step, m.samples, m.mean_reward), (1, 2, 0.0));
    assert!(m.loss.is_some());

    // The backend trained on exactly the stored tokens with advantages ±1.
    let fb = s.fake.requests_to("/api/v1/forward_backward");
    assert_eq!(fb.len(), 1);
    let model = s.fake.model(&s.run.model_id).unwrap();
    assert_eq!(
        (model.forward_backward_calls, model.weights_version),
        (1, 1)
    );
    assert!(model.checkpoints.contains(&m.sampler_path), "{model:?}");
    assert!(
        model
            .checkpoints
            .contains(m.checkpoint_path.as_ref().unwrap())
    );

    // New requests sample from the new weights.
    let new = s.slot.current().unwrap();
    assert_ne!(new.id, old.id);
    assert_eq!(new.source, SamplerSource::Path(m.sampler_path.clone()));
    let out = s
        .backend
        .sample(&new, &[1, 2, 3], &SamplingParams::default())
        .await
        .unwrap();
    assert!(!out.sequences[0].tokens.is_empty());

    assert_eq!(status_of(&store, a), SampleStatus::Consumed { step: 1 });
    assert_eq!(status_of(&store, b), SampleStatus::Consumed { step: 1 });
    let rows = store.with(|st| st.learning_steps(10)).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].sampler_path.as_deref(),
        Some(m.sampler_path.as_str())
    );
    assert_eq!(rows[0].error, None);
    assert_eq!(trainer.status().step, 1);
    assert_eq!(trainer.status().last_error, None);

    // Nothing left to train on.
    let outcome = trainer.step(REQ, pending::<()>()).await.unwrap();
    assert!(matches!(
        outcome,
        StepOutcome::NotEnoughSamples { ready: 0, .. }
    ));
}

#[tokio::test]
async fn forward_backward_carries_the_sampled_tokens_logprobs_and_masked_prompt() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    s.judge_fake.push_reply("Score: 1");
    s.judge_fake.push_reply("Score: 1");
    s.judge_fake.push_reply("Score: 1");
    s.judge_fake.set_default_reply("Score: -1");
    let a = s.turn(&store, 1, "ok").await;
    s.turn(&store, 2, "no").await;
    s.judge(&store).await;
    let trainer = s.trainer(&store, 0);
    trainer.step(REQ, pending::<()>()).await.unwrap();
    let row = store.get(a).unwrap().unwrap();
    let body = &s.fake.requests_to("/api/v1/forward_backward")[0].body;
    let input = &body["forward_backward_input"];
    assert_eq!(input["loss_fn"], "importance_sampling");
    let datum = &input["data"][0];
    let nums = |v: &serde_json::Value| -> Vec<f64> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let p = row.prompt_tokens.len();
    let all: Vec<f64> = row
        .prompt_tokens
        .iter()
        .chain(&row.completion_tokens)
        .map(|t| f64::from(*t))
        .collect();
    let tokens: Vec<f64> = datum["model_input"]["chunks"][0]["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(tokens, all[..all.len() - 1]);
    assert_eq!(nums(&datum["loss_fn_inputs"]["target_tokens"]), all[1..]);
    let lps = nums(&datum["loss_fn_inputs"]["logprobs"]);
    assert!(lps[..p - 1].iter().all(|x| *x == 0.0));
    let sent: Vec<f32> = lps[p - 1..].iter().map(|x| *x as f32).collect();
    assert_eq!(sent, row.completion_logprobs);
    // Rewards +1 and −1 z-score to +1 and −1; the prompt is masked.
    let adv = nums(&datum["loss_fn_inputs"]["advantages"]);
    assert!(adv[..p - 1].iter().all(|x| *x == 0.0));
    assert!(
        adv[p - 1..].iter().all(|x| (*x - 1.0).abs() < 1e-6),
        "{adv:?}"
    );
    let adv2 = nums(&input["data"][1]["loss_fn_inputs"]["advantages"]);
    assert!(
        adv2[p - 1..].iter().all(|x| (*x + 1.0).abs() < 1e-6),
        "{adv2:?}"
    );
}

#[tokio::test]
async fn a_backend_outage_keeps_the_samples_and_the_next_step_succeeds() {
    let policy = RetryPolicy {
        max_retries: 2,
        ..fast_policy()
    };
    let s = Setup::new(policy).await;
    let store = open(&s.db());
    let a = s.turn(&store, 1, "ok").await;
    let b = s.turn(&store, 2, "ok").await;
    s.judge(&store).await;
    let trainer = s.trainer(&store, 0);
    s.fake.push_faults(
        "/api/v1/forward_backward",
        Fault::Status {
            status: 503,
            retry_after: None,
        },
        3,
    );
    let err = trainer.step(REQ, pending::<()>()).await.unwrap_err();
    assert!(err.is_transient(), "{err}");
    let last = trainer.status().last_error.unwrap();
    assert!(last.contains("503"), "{last}");
    assert_eq!(status_of(&store, a), SampleStatus::Waiting);
    assert_eq!(status_of(&store, b), SampleStatus::Waiting);
    assert_eq!(trainer.status().step, 0);
    assert_eq!(s.fake.model(&s.run.model_id).unwrap().weights_version, 0);

    let outcome = trainer.step(REQ, pending::<()>()).await.unwrap();
    assert!(matches!(outcome, StepOutcome::Trained(ref m) if m.step == 1 && m.samples == 2));
    assert_eq!(status_of(&store, a), SampleStatus::Consumed { step: 1 });
    assert_eq!(trainer.status().last_error, None);
}

#[tokio::test]
async fn a_stop_between_forward_backward_and_optim_step_consumes_nothing() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    let a = s.turn(&store, 1, "ok").await;
    let b = s.turn(&store, 2, "ok").await;
    s.judge(&store).await;
    let trainer = s.trainer(&store, 0);
    let old = s.slot.current().unwrap();
    // The user comes back as soon as forward_backward has run.
    let fake = &s.fake;
    let model_id = s.run.model_id.clone();
    let user_back = poll_fn(|_| {
        if fake.model(&model_id).unwrap().forward_backward_calls > 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    });
    let outcome = trainer.step(REQ, user_back).await.unwrap();
    assert_eq!(
        outcome,
        StepOutcome::Stopped {
            phase: StopPhase::BeforeOptimStep,
            samples: 2,
            dropped: 0
        }
    );
    let model = s.fake.model(&s.run.model_id).unwrap();
    assert_eq!(
        (model.forward_backward_calls, model.weights_version),
        (1, 0)
    );
    assert_eq!(status_of(&store, a), SampleStatus::Waiting);
    assert_eq!(status_of(&store, b), SampleStatus::Waiting);
    assert_eq!(s.slot.current().unwrap().id, old.id);
    assert_eq!(trainer.status().step, 0);

    // A stop that has already fired ends the next step before anything is sent.
    let outcome = trainer.step(REQ, std::future::ready(())).await.unwrap();
    assert!(matches!(outcome, StepOutcome::Stopped { .. }));
    assert_eq!(s.fake.requests_to("/api/v1/optim_step").len(), 0);

    // The next window finishes the same batch without a second forward_backward.
    let outcome = trainer.step(REQ, pending::<()>()).await.unwrap();
    assert!(matches!(outcome, StepOutcome::Trained(ref m) if m.samples == 2));
    let model = s.fake.model(&s.run.model_id).unwrap();
    assert_eq!(
        (model.forward_backward_calls, model.weights_version),
        (1, 1)
    );
    assert_eq!(status_of(&store, a), SampleStatus::Consumed { step: 1 });
}

#[tokio::test]
async fn a_stop_before_forward_backward_sends_nothing() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    s.turn(&store, 1, "ok").await;
    s.turn(&store, 2, "ok").await;
    s.judge(&store).await;
    let trainer = s.trainer(&store, 0);
    let outcome = trainer.step(REQ, std::future::ready(())).await.unwrap();
    assert!(matches!(
        outcome,
        StepOutcome::Stopped {
            phase: StopPhase::BeforeForwardBackward,
            ..
        }
    ));
    assert!(s.fake.requests_to("/api/v1/forward_backward").is_empty());
    assert_eq!(store.counts().unwrap().waiting, 2);
}

#[tokio::test]
async fn samples_survive_a_restart_in_the_middle_of_a_batch() {
    let s = Setup::new(fast_policy()).await;
    let first = {
        let store = open(&s.db());
        let id = s.turn(&store, 1, "ok").await;
        s.judge(&store).await;
        let trainer = s.trainer(&store, 0);
        // Half a batch: no step.
        let outcome = trainer.step(REQ, pending::<()>()).await.unwrap();
        assert!(matches!(
            outcome,
            StepOutcome::NotEnoughSamples {
                ready: 1,
                needed: 2,
                ..
            }
        ));
        id
    };
    let store = open(&s.db());
    let second = s.turn(&store, 2, "ok").await;
    s.judge(&store).await;
    let trainer = s.trainer(&store, 0);
    let outcome = trainer.step(REQ, pending::<()>()).await.unwrap();
    assert!(matches!(outcome, StepOutcome::Trained(ref m) if m.samples == 2));
    assert_eq!(status_of(&store, first), SampleStatus::Consumed { step: 1 });
    assert_eq!(
        status_of(&store, second),
        SampleStatus::Consumed { step: 1 }
    );
}

#[tokio::test]
async fn older_skill_generations_are_dropped_from_the_batch() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    let stale = s.turn(&store, 1, "ok").await;
    s.judge(&store).await;
    // The skills changed: the old sample no longer describes the current policy.
    let mut ids = Vec::new();
    for turn in 2..4 {
        let id = s.turn(&store, turn, "ok").await;
        store
            .with(|st| {
                st.connection()
                    .execute(
                        "UPDATE learn_samples SET skill_generation = 1 WHERE id = ?1",
                        [id],
                    )
                    .map(|_| ())
                    .map_err(Into::into)
            })
            .unwrap();
        ids.push(id);
    }
    s.judge(&store).await;
    let trainer = s.trainer(&store, 0);
    let req = StepRequest {
        skill_generation: 1,
        min_samples: 2,
    };
    let outcome = trainer.step(req, pending::<()>()).await.unwrap();
    let StepOutcome::Trained(m) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!((m.samples, m.dropped), (2, 1));
    assert_eq!(status_of(&store, stale), SampleStatus::Dropped);
    assert_eq!(
        status_of(&store, ids[0]),
        SampleStatus::Consumed { step: 1 }
    );
}

#[tokio::test]
async fn checkpoints_are_recorded_and_a_new_trainer_resumes_from_them() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    for round in 0..2 {
        s.turn(&store, round * 2 + 1, "ok").await;
        s.turn(&store, round * 2 + 2, "ok").await;
        s.judge(&store).await;
        let trainer = s.trainer(&store, 2);
        trainer.step(REQ, pending::<()>()).await.unwrap();
    }
    let rows = store.with(|st| st.learning_steps(10)).unwrap();
    assert_eq!(rows.iter().map(|r| r.step).collect::<Vec<_>>(), vec![2, 1]);
    assert_eq!(rows[1].checkpoint_path, None);
    let ckpt = rows[0].checkpoint_path.clone().unwrap();
    assert!(
        s.fake
            .model(&s.run.model_id)
            .unwrap()
            .checkpoints
            .contains(&ckpt)
    );

    // After a restart: a fresh run restores the checkpoint and serves from it.
    let run = s.backend.create_training_run(BASE, 8).await.unwrap();
    let slot = SamplerSlot::new(None);
    let trainer = Trainer::new(
        s.backend.clone(),
        run,
        store.clone(),
        slot.clone(),
        TrainerConfig::default(),
    )
    .unwrap();
    assert_eq!(trainer.status().step, 2);
    assert_eq!(
        trainer.status().last_checkpoint.as_deref(),
        Some(ckpt.as_str())
    );
    trainer.resume(&ckpt).await.unwrap();
    let sampler = slot.current().unwrap();
    assert!(matches!(sampler.source, SamplerSource::Path(_)));
    assert!(!s.fake.requests_to("/api/v1/load_weights").is_empty());

    // A checkpoint that does not exist is an error, recorded.
    let err = trainer.resume("tinker://nope/weights/x").await.unwrap_err();
    assert!(trainer.status().last_error.is_some(), "{err}");
}

#[tokio::test]
async fn serving_continues_on_the_old_sampler_while_a_step_runs() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    s.turn(&store, 1, "ok").await;
    s.turn(&store, 2, "ok").await;
    s.judge(&store).await;
    let trainer = s.trainer(&store, 0);
    let old = s.slot.current().unwrap();
    // forward_backward stays pending on the backend for a long while.
    s.fake
        .push_script("forward_backward", FutureScript::TryAgain(400));
    let step = trainer.step(REQ, pending::<()>());
    let serve = async {
        assert!(
            common::eventually(|| !s.fake.requests_to("/api/v1/forward_backward").is_empty()).await
        );
        let mut served = 0;
        for seed in 0..3 {
            let sampler = s.slot.current().unwrap();
            assert_eq!(sampler.id, old.id);
            let params = SamplingParams {
                max_tokens: 3,
                seed: Some(seed),
                ..SamplingParams::default()
            };
            s.backend.sample(&sampler, &[1, 2], &params).await.unwrap();
            served += 1;
        }
        // Still training: the optimizer step has not been sent.
        assert!(s.fake.requests_to("/api/v1/optim_step").is_empty());
        served
    };
    let (outcome, served) = tokio::join!(step, serve);
    assert_eq!(served, 3);
    assert!(matches!(outcome.unwrap(), StepOutcome::Trained(_)));
    assert_ne!(s.slot.current().unwrap().id, old.id);
}

#[tokio::test]
async fn a_failed_save_after_the_optimizer_step_is_recorded_and_repaired_next_time() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    let a = s.turn(&store, 1, "ok").await;
    s.turn(&store, 2, "ok").await;
    s.judge(&store).await;
    let trainer = s.trainer(&store, 0);
    let old = s.slot.current().unwrap();
    s.fake.push_script(
        "save_weights_for_sampler",
        FutureScript::Fail {
            message: "disk full".into(),
            category: "server".into(),
        },
    );
    let err = trainer.step(REQ, pending::<()>()).await.unwrap_err();
    assert!(err.to_string().contains("disk full"), "{err}");
    // The optimizer applied the batch: it is consumed (never trained twice) and the step
    // is on record with its error; serving stays on the old weights.
    assert_eq!(status_of(&store, a), SampleStatus::Consumed { step: 1 });
    let rows = store.with(|st| st.learning_steps(10)).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].sampler_path, None);
    assert!(rows[0].error.as_deref().unwrap().contains("disk full"));
    assert_eq!(s.slot.current().unwrap().id, old.id);
    assert!(trainer.status().last_error.unwrap().contains("disk full"));

    // The next call saves the trained weights for serving even without a new batch.
    let outcome = trainer.step(REQ, pending::<()>()).await.unwrap();
    assert!(matches!(outcome, StepOutcome::NotEnoughSamples { .. }));
    assert_eq!(trainer.status().last_error, None, "the failure was mended");
    let new = s.slot.current().unwrap();
    assert_ne!(new.id, old.id);
    let SamplerSource::Path(path) = &new.source else {
        panic!("{:?}", new.source)
    };
    assert!(
        s.fake
            .model(&s.run.model_id)
            .unwrap()
            .checkpoints
            .contains(path)
    );
}

#[tokio::test]
async fn a_stop_while_the_weights_are_saved_keeps_the_step_on_record() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    let a = s.turn(&store, 1, "ok").await;
    s.turn(&store, 2, "ok").await;
    s.judge(&store).await;
    let trainer = s.trainer(&store, 0);
    s.fake
        .push_script("save_weights_for_sampler", FutureScript::Hold);
    // The process stops (the step's future is dropped) while the weights are being saved.
    let mut step = Box::pin(trainer.step(REQ, pending::<()>()));
    let mut polls = 0;
    while s.fake.held() == 0 {
        assert!(polls < 2000, "the save was never submitted");
        polls += 1;
        tokio::select! {
            r = &mut step => panic!("the step ended while the save was held: {r:?}"),
            () = tokio::time::sleep(std::time::Duration::from_millis(5)) => {}
        }
    }
    drop(step);
    // The optimizer step happened: its batch and its row were written together.
    assert_eq!(status_of(&store, a), SampleStatus::Consumed { step: 1 });
    let rows = store.with(|st| st.learning_steps(10)).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].step, rows[0].samples), (1, 2));
    assert_eq!(rows[0].sampler_path, None);
    // After a restart the step counter continues after it: step 1 is never reused.
    s.fake.release_holds();
    s.turn(&store, 3, "ok").await;
    s.turn(&store, 4, "ok").await;
    s.judge(&store).await;
    let again = s.trainer(&store, 0);
    let StepOutcome::Trained(m) = again.step(REQ, pending::<()>()).await.unwrap() else {
        panic!("no step")
    };
    assert_eq!(m.step, 2);
    let rows = store.with(|st| st.learning_steps(10)).unwrap();
    assert_eq!(rows.iter().map(|r| r.step).collect::<Vec<_>>(), vec![2, 1]);
}

#[tokio::test]
async fn the_configured_loss_function_is_sent() {
    for (name, wire) in [
        ("ppo", "ppo"),
        ("cispo", "cispo"),
        ("importance_sampling", "importance_sampling"),
    ] {
        let s = Setup::new(fast_policy()).await;
        let store = open(&s.db());
        s.turn(&store, 1, "ok").await;
        s.turn(&store, 2, "ok").await;
        s.judge(&store).await;
        let loss_fn: metaclaw_learn::LossFn = name.parse().unwrap();
        let trainer = Trainer::new(
            s.backend.clone(),
            s.run.clone(),
            store.clone(),
            s.slot.clone(),
            TrainerConfig {
                batch_size: 2,
                loss: loss_fn.into(),
                ..TrainerConfig::default()
            },
        )
        .unwrap();
        trainer.step(REQ, pending::<()>()).await.unwrap();
        let body = &s.fake.requests_to("/api/v1/forward_backward")[0].body;
        assert_eq!(body["forward_backward_input"]["loss_fn"], wire);
    }
    assert!("sft".parse::<metaclaw_learn::LossFn>().is_err());
}

#[tokio::test]
async fn a_step_can_run_on_its_own_task() {
    let s = Setup::new(fast_policy()).await;
    let store = open(&s.db());
    s.turn(&store, 1, "ok").await;
    s.turn(&store, 2, "ok").await;
    s.judge(&store).await;
    let trainer = Arc::new(s.trainer(&store, 0));
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = {
        let trainer = trainer.clone();
        tokio::spawn(async move { trainer.step(REQ, rx).await })
    };
    let outcome = task.await.unwrap().unwrap();
    assert!(matches!(outcome, StepOutcome::Trained(_)));
    drop(tx);
}
