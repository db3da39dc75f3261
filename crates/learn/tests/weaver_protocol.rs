//! The Weaver client against the fake backend's Weaver routes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{fake, fast_policy};
use metaclaw_e2e::fake_tinker::{FakeTinker, FakeTinkerOptions, Fault, FutureScript};
use metaclaw_learn::weaver::{WeaverClient, WeaverConfig};
use metaclaw_learn::{
    AdamParams, Backend, BackendKind, Datum, LearnError, LossFn, SamplerSource, SamplingParams,
};

const BASE: &str = "Qwen/Qwen3-8B";

async fn weaver(fake: &FakeTinker) -> WeaverClient {
    WeaverClient::connect(WeaverConfig {
        base_url: fake.base_url(),
        api_key: fake.api_key().to_owned(),
        policy: fast_policy(),
    })
    .await
    .unwrap()
}

fn datum(prompt: &[u32], sampled: &[u32], lps: &[f32]) -> Datum {
    let all: Vec<u32> = prompt.iter().chain(sampled).copied().collect();
    let p = prompt.len() - 1;
    let mut logprobs = vec![0.0; p];
    logprobs.extend_from_slice(lps);
    let mut adv = vec![0.0; p];
    adv.extend(std::iter::repeat_n(1.0, sampled.len()));
    Datum::new(
        all[..all.len() - 1].to_vec(),
        all[1..].to_vec(),
        logprobs,
        adv,
    )
    .unwrap()
}

#[tokio::test]
async fn a_full_cycle_uses_weavers_endpoints_and_header() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = weaver(&fake).await;
    assert_eq!(client.kind(), BackendKind::Weaver);
    let run = client.create_training_run(BASE, 16).await.unwrap();
    let sampler = client
        .create_sampler(&SamplerSource::BaseModel(BASE.into()))
        .await
        .unwrap();
    let params = SamplingParams {
        max_tokens: 5,
        seed: Some(4),
        temperature: 1.0,
        ..SamplingParams::default()
    };
    let prompt = [7u32, 8, 9];
    let out = client.sample(&sampler, &prompt, &params).await.unwrap();
    let seq = &out.sequences[0];
    let d = datum(&prompt, &seq.tokens, &seq.logprobs);
    let fb = client
        .forward_backward(
            &run,
            std::slice::from_ref(&d),
            LossFn::ImportanceSampling.into(),
        )
        .await
        .unwrap();
    assert_eq!(
        &fb.logprobs[0][prompt.len() - 1..],
        seq.logprobs.as_slice(),
        "on-policy logprobs match"
    );
    assert!((fb.loss().unwrap() + 5.0).abs() < 1e-9);
    client
        .optim_step(
            &run,
            AdamParams {
                learning_rate: 0.05,
                ..AdamParams::default()
            },
        )
        .await
        .unwrap();
    let path = client.save_weights_for_sampler(&run, "s1").await.unwrap();
    assert_eq!(
        path,
        format!("weaver://{}/sampler_weights/s1", run.model_id)
    );
    client
        .create_sampler(&SamplerSource::Path(path))
        .await
        .unwrap();
    let ckpt = client.save_state(&run, "c1").await.unwrap();
    assert_eq!(ckpt, format!("weaver://{}/weights/c1", run.model_id));
    client.load_state(&run, &ckpt, true).await.unwrap();

    let session = client.session().id.as_str();
    let paths: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .filter(|p| !p.contains("/operations/"))
        .collect();
    let m = &run.model_id;
    assert_eq!(
        paths,
        [
            "POST /api/v1/sessions".to_owned(),
            format!("POST /api/v1/sessions/{session}/models"),
            format!("POST /api/v1/sessions/{session}/sampling-sessions"),
            format!("POST /api/v1/sampling-sessions/{}/samples", sampler.id),
            format!("POST /api/v1/models/{m}/forward-backward-passes"),
            format!("POST /api/v1/models/{m}/optimizer-steps"),
            format!("POST /api/v1/models/{m}/export-sampler"),
            format!("POST /api/v1/sessions/{session}/sampling-sessions"),
            format!("POST /api/v1/models/{m}/checkpoints"),
            format!("POST /api/v1/models/{m}/load"),
        ]
    );
    for r in fake.requests() {
        assert_eq!(
            r.header("x-weaver-api-key"),
            Some(fake.api_key()),
            "{}",
            r.path
        );
        assert!(r.header("x-api-key").is_none());
    }
    let fb_body = &fake.requests_to(&format!("/api/v1/models/{m}/forward-backward-passes"))[0].body;
    let payload = &fb_body["payload"];
    assert_eq!(payload["seq_id"], 1);
    let mask = &payload["forward_backward_input"]["data"][0]["loss_fn_inputs"]["loss_mask"]["data"];
    let expected: Vec<f64> = d
        .advantages()
        .iter()
        .map(|a| if *a != 0.0 { 1.0 } else { 0.0 })
        .collect();
    assert_eq!(
        mask,
        &serde_json::json!(expected),
        "loss_mask = advantage ≠ 0"
    );
    assert_eq!(
        fake.requests_to(&format!("/api/v1/models/{m}/optimizer-steps"))[0].body["payload"]["seq_id"],
        2
    );
    assert_eq!(fake.model(m).unwrap().seq_log, [1, 2, 3]);
}

#[tokio::test]
async fn operations_are_polled_until_done_and_failures_surface() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = weaver(&fake).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_script("optim_step", FutureScript::TryAgain(3));
    client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap();
    let polls = fake
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/api/v1/operations/"))
        .count();
    assert_eq!(polls, 4, "running three times, then done");

    fake.push_script(
        "optim_step",
        FutureScript::Fail {
            message: "trainer crashed".into(),
            category: "server".into(),
        },
    );
    let err = client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("trainer crashed") && err.to_string().contains("Weaver"),
        "{err}"
    );
}

#[tokio::test]
async fn submissions_are_not_resent_but_rate_limits_are_waited_out() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = weaver(&fake).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    let path = format!("/api/v1/models/{}/optimizer-steps", run.model_id);
    fake.push_fault(
        &path,
        Fault::Status {
            status: 500,
            retry_after: None,
        },
    );
    let err = client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            LearnError::Backend {
                status: Some(500),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(fake.requests_to(&path).len(), 1);

    fake.push_fault(
        &path,
        Fault::Status {
            status: 429,
            retry_after: None,
        },
    );
    client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap();
    assert_eq!(fake.requests_to(&path).len(), 3);
}

#[tokio::test]
async fn unsupported_losses_and_wrong_keys_are_refused() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = weaver(&fake).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    let d = Datum::new(vec![1], vec![2], vec![-1.0], vec![1.0]).unwrap();
    let err = client
        .forward_backward(&run, &[d], LossFn::Ppo.into())
        .await
        .unwrap_err();
    assert!(
        matches!(err, LearnError::Invalid { .. }) && err.to_string().contains("ppo"),
        "{err}"
    );

    let err = WeaverClient::connect(WeaverConfig {
        base_url: fake.base_url(),
        api_key: "sk-not-the-key-42".into(),
        policy: fast_policy(),
    })
    .await
    .unwrap_err();
    assert!(matches!(err, LearnError::Auth { .. }), "{err:?}");
    assert!(!err.to_string().contains("sk-not-the-key-42"));
}

#[tokio::test]
async fn weaver_heartbeats_go_to_its_session_route() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let policy = metaclaw_learn::RetryPolicy {
        heartbeat_interval: std::time::Duration::from_millis(20),
        ..fast_policy()
    };
    let client = WeaverClient::connect(WeaverConfig {
        base_url: fake.base_url(),
        api_key: fake.api_key().to_owned(),
        policy,
    })
    .await
    .unwrap();
    let session = client.session().id.clone();
    assert!(common::eventually(|| fake.heartbeats(&session) >= 2).await);
    assert!(
        !fake
            .requests_to(&format!("/api/v1/sessions/{session}/heartbeat"))
            .is_empty()
    );
}
