//! On-policy distillation: teacher logprobs over the exact token ids from the fake
//! teacher, and the per-token KL term in the datums the trainer sends.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::future::pending;
use std::sync::Arc;
use std::time::Duration;

use common::{fake, fast_policy, tinker};
use metaclaw_e2e::fake_judge::{FakeJudge, teacher_logprob};
use metaclaw_e2e::fake_tinker::FakeTinkerOptions;
use metaclaw_learn::{
    Backend, CallObserver, SampleStore, SamplerSlot, SamplerSource, SamplingParams, StepOutcome,
    StepRequest, Teacher, TeacherConfig, Trainer, TrainerConfig,
};
use metaclaw_store::NewSample;

fn teacher(fake: &FakeJudge) -> Teacher {
    Teacher::new(TeacherConfig {
        base_url: fake.base_url(),
        model: "teacher".into(),
        retry_delay: Duration::from_millis(5),
        ..TeacherConfig::default()
    })
    .unwrap()
}

#[tokio::test]
async fn teacher_scores_the_exact_completion_tokens() {
    let fake = FakeJudge::start().await.unwrap();
    fake.push_fault(503, 1);
    // Every call is told to the observer: the failed one without an answer.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let observed = Teacher::new(TeacherConfig {
        base_url: fake.base_url(),
        model: "teacher".into(),
        retry_delay: Duration::from_millis(5),
        on_call: Some(CallObserver::new(move |answer| {
            log.lock()
                .unwrap()
                .push(answer.map(|a| a["usage"]["prompt_tokens"].clone()));
        })),
        ..TeacherConfig::default()
    })
    .unwrap();
    let lps = observed
        .logprobs(&[7, 8, 9], &[4, 6], &[-0.1, -0.2])
        .await
        .unwrap();
    assert_eq!(lps, vec![teacher_logprob(4), teacher_logprob(6)]);
    assert_eq!(
        *seen.lock().unwrap(),
        [None, Some(serde_json::json!(5))],
        "the 503, then the answer with its usage"
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    let body = &reqs[1].1;
    assert_eq!(reqs[1].0, "/v1/completions");
    assert_eq!(body["prompt"], serde_json::json!([7, 8, 9, 4, 6]));
    assert_eq!(body["echo"], true);
    assert_eq!(body["logprobs"], 1);
    assert_eq!(body["max_tokens"], 0);
}

#[tokio::test]
async fn a_null_first_token_keeps_the_students_logprob() {
    let fake = FakeJudge::start().await.unwrap();
    // With an empty prompt the first completion token sits at the echo's `null` position.
    let lps = teacher(&fake)
        .logprobs(&[], &[3, 4], &[-0.7, -0.2])
        .await
        .unwrap();
    assert_eq!(lps, vec![-0.7, teacher_logprob(4)]);
}

#[tokio::test]
async fn the_kl_term_reaches_the_datums() {
    let tinker_fake = fake(FakeTinkerOptions::default()).await;
    let backend: Arc<dyn Backend> = Arc::new(tinker(&tinker_fake, fast_policy()).await);
    let run = backend
        .create_training_run("Qwen/Qwen3-4B", 8)
        .await
        .unwrap();
    let base = backend
        .create_sampler(&SamplerSource::BaseModel("Qwen/Qwen3-4B".into()))
        .await
        .unwrap();
    let judge_fake = FakeJudge::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let mut ids = Vec::new();
    for turn in 1..3u32 {
        let prompt = vec![1, 2, turn];
        let params = SamplingParams {
            max_tokens: 4,
            seed: Some(u64::from(turn)),
            ..SamplingParams::default()
        };
        let out = backend.sample(&base, &prompt, &params).await.unwrap();
        let seq = &out.sequences[0];
        let id = store
            .insert(&NewSample {
                session_id: "s".into(),
                turn_index: i64::from(turn),
                skill_generation: 0,
                prompt_tokens: prompt,
                completion_tokens: seq.tokens.clone(),
                completion_logprobs: seq.logprobs.clone(),
                sampler_path: None,
                instruction: "q".into(),
                response_text: "a".into(),
                created_at_ms: 0,
                carried: Vec::new(),
                held_out: false,
            })
            .unwrap();
        // Equal rewards: the batch advantage is 0, so only the KL term remains.
        store
            .with(|s| s.set_sample_score(id, 1.0, &[Some(1)]))
            .unwrap();
        ids.push(id);
    }
    let report = teacher(&judge_fake)
        .score_pending(&store, 10)
        .await
        .unwrap();
    assert_eq!((report.scored, report.failed), (2, 0));

    let trainer = Trainer::new(
        backend.clone(),
        run,
        store.clone(),
        SamplerSlot::new(Some(base)),
        TrainerConfig {
            batch_size: 2,
            kl_coef: 0.5,
            checkpoint_every: 0,
            ..TrainerConfig::default()
        },
    )
    .unwrap();
    let req = StepRequest {
        skill_generation: 0,
        min_samples: 2,
    };
    let outcome = trainer.step(req, pending::<()>()).await.unwrap();
    assert!(matches!(outcome, StepOutcome::Trained(_)));

    let body = &tinker_fake.requests_to("/api/v1/forward_backward")[0].body;
    for (i, id) in ids.iter().enumerate() {
        let row = store.get(*id).unwrap().unwrap();
        let adv: Vec<f64> =
            body["forward_backward_input"]["data"][i]["loss_fn_inputs"]["advantages"]["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
        let p = row.prompt_tokens.len();
        assert!(adv[..p - 1].iter().all(|a| *a == 0.0));
        for (j, tok) in row.completion_tokens.iter().enumerate() {
            let s = row.completion_logprobs[j];
            let want = -0.5 * (s - teacher_logprob(*tok));
            assert!(
                (adv[p - 1 + j] - f64::from(want)).abs() < 1e-5,
                "token {j}: {} vs {want}",
                adv[p - 1 + j]
            );
        }
    }
}
