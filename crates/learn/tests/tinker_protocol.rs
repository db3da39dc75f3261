//! The Tinker JSON client against the fake backend: bootstrap, every endpoint, sequence
//! ids, on-policy logprobs, and the loss going down over steps.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{fake, fast_policy, tinker};
use metaclaw_e2e::fake_tinker::FakeTinkerOptions;
use metaclaw_learn::{
    AdamParams, Backend, Datum, LossConfig, LossFn, SamplerSource, SamplingParams, Stop, StopReason,
};
use serde_json::Value;

const BASE: &str = "Qwen/Qwen3-4B";

fn params(max_tokens: u32, seed: u64) -> SamplingParams {
    SamplingParams {
        max_tokens,
        temperature: 1.0,
        seed: Some(seed),
        ..SamplingParams::default()
    }
}

/// The datum that trains on `prompt` + `sampled` with advantage `adv` on sampled tokens.
fn datum(prompt: &[u32], sampled: &[u32], sampled_lps: &[f32], adv: f32) -> Datum {
    let all: Vec<u32> = prompt.iter().chain(sampled).copied().collect();
    let n = all.len() - 1;
    let p = prompt.len() - 1;
    let mut logprobs = vec![0.0; p];
    logprobs.extend_from_slice(sampled_lps);
    let mut advantages = vec![0.0; p];
    advantages.extend(std::iter::repeat_n(adv, sampled.len()));
    Datum::new(all[..n].to_vec(), all[1..].to_vec(), logprobs, advantages).unwrap()
}

#[tokio::test]
async fn bootstrap_creates_a_session_with_the_key_header() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let reqs = fake.requests();
    assert_eq!(reqs[0].path, "/api/v1/client/config");
    assert_eq!(reqs[1].path, "/api/v1/create_session");
    assert_eq!(reqs[1].body["type"], "create_session");
    assert!(
        client.session().id.as_str().starts_with("session-"),
        "{}",
        client.session().id.as_str()
    );
    for r in &reqs {
        assert_eq!(
            r.header("x-api-key"),
            Some(fake.api_key()),
            "{} carries the key",
            r.path
        );
        assert!(r.header("authorization").is_none());
        assert!(
            r.header("x-idempotency-key").is_some_and(|k| k.len() == 32),
            "POST {} has an idempotency key",
            r.path
        );
    }
}

#[tokio::test]
async fn a_full_training_cycle_uses_every_endpoint_in_sequence() {
    let fake = fake(FakeTinkerOptions {
        supported_models: vec![BASE.into()],
        ..Default::default()
    })
    .await;
    let client = tinker(&fake, fast_policy()).await;

    let run = client.create_training_run(BASE, 8).await.unwrap();
    assert_eq!(
        run.model_id,
        format!("{}:train:0", client.session().id.as_str())
    );
    let create = &fake.requests_to("/api/v1/create_model")[0].body;
    assert_eq!(create["base_model"], BASE);
    assert_eq!(create["lora_config"]["rank"], 8);
    assert_eq!(create["model_seq_id"], 0);

    // Sample from the base model.
    let base = client
        .create_sampler(&SamplerSource::BaseModel(BASE.into()))
        .await
        .unwrap();
    let prompt = [3u32, 9, 27, 5];
    let out = client.sample(&base, &prompt, &params(6, 7)).await.unwrap();
    let seq = &out.sequences[0];
    assert_eq!(seq.tokens.len(), 6);
    assert_eq!(seq.logprobs.len(), 6);
    assert_eq!(seq.stop_reason, StopReason::Length);
    assert!(seq.logprobs.iter().all(|l| *l < 0.0 && l.is_finite()));
    let asample = &fake.requests_to("/api/v1/asample")[0];
    assert_eq!(asample.header("x-tinker-sampling-backpressure"), Some("1"));
    assert_eq!(
        asample.body["prompt"]["chunks"][0]["tokens"],
        serde_json::json!(prompt)
    );
    assert_eq!(asample.body["seq_id"], 0);
    assert_eq!(asample.body["sampling_params"]["max_tokens"], 6);

    // On-policy: the trainer's logprobs of the sampled tokens equal the sampler's, so the
    // importance ratio is 1 and the loss is minus the sum of advantages.
    let d = datum(&prompt, &seq.tokens, &seq.logprobs, 1.0);
    let fb = client
        .forward_backward(
            &run,
            std::slice::from_ref(&d),
            LossFn::ImportanceSampling.into(),
        )
        .await
        .unwrap();
    assert_eq!(fb.logprobs.len(), 1);
    assert_eq!(&fb.logprobs[0][prompt.len() - 1..], seq.logprobs.as_slice());
    let loss0 = fb.loss().unwrap();
    assert!((loss0 + 6.0).abs() < 1e-9, "loss {loss0} = -6 at ratio 1");

    let opt = client
        .optim_step(
            &run,
            AdamParams {
                learning_rate: 0.05,
                ..AdamParams::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(opt.metrics.get("step:max"), Some(&1.0));

    // The loss goes down step after step on the same data.
    let mut losses = vec![loss0];
    for _ in 0..3 {
        let fb = client
            .forward_backward(
                &run,
                std::slice::from_ref(&d),
                LossFn::ImportanceSampling.into(),
            )
            .await
            .unwrap();
        losses.push(fb.loss().unwrap());
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
    }
    assert!(
        losses.windows(2).all(|w| w[1] < w[0]),
        "losses decrease: {losses:?}"
    );

    // Save for sampling, open a sampler on it; the trained sampler differs from the base.
    let path = client
        .save_weights_for_sampler(&run, "step_0004")
        .await
        .unwrap();
    assert_eq!(
        path,
        format!("tinker://{}/sampler_weights/step_0004", run.model_id)
    );
    let trained = client
        .create_sampler(&SamplerSource::Path(path.clone()))
        .await
        .unwrap();
    assert_ne!(trained.id, base.id);
    let again = client
        .sample(&trained, &prompt, &params(6, 7))
        .await
        .unwrap();
    let lp_trained: f32 = again.sequences[0].logprobs.iter().sum();
    assert!(lp_trained.is_finite());
    let second = client
        .sample(&trained, &prompt, &params(6, 7))
        .await
        .unwrap();
    assert_eq!(
        second.sequences[0].tokens, again.sequences[0].tokens,
        "same seed, same tokens"
    );
    let seqs: Vec<Value> = fake
        .requests_to("/api/v1/asample")
        .iter()
        .map(|r| r.body["seq_id"].clone())
        .collect();
    assert_eq!(
        seqs,
        [0, 0, 1].map(Value::from),
        "sampling seq ids count per sampler"
    );

    // Checkpoint and resume.
    let state = client.save_state(&run, "ckpt_1").await.unwrap();
    assert_eq!(state, format!("tinker://{}/weights/ckpt_1", run.model_id));
    client.load_state(&run, &state, true).await.unwrap();
    let load = &fake.requests_to("/api/v1/load_weights")[0].body;
    assert_eq!(load["optimizer"], true);
    assert_eq!(load["path"], state.as_str());

    // Every training request carried the next sequence id and ran in that order.
    let model = fake.model(&run.model_id).unwrap();
    assert_eq!(model.seq_log, (1..=11).collect::<Vec<u64>>());
    assert_eq!(model.forward_backward_calls, 4);
    assert_eq!(model.weights_version, 4);
    let sent: Vec<u64> = fake
        .requests()
        .iter()
        .filter(|r| r.body.get("model_id").is_some() && r.body.get("seq_id").is_some())
        .map(|r| r.body["seq_id"].as_u64().unwrap())
        .collect();
    assert_eq!(sent, (1..=11).collect::<Vec<u64>>());
    let opt_body = &fake.requests_to("/api/v1/optim_step")[0].body;
    assert_eq!(opt_body["adam_params"]["learning_rate"], 0.05);
    assert_eq!(opt_body["adam_params"]["beta2"], 0.95);
}

#[tokio::test]
async fn sampling_stops_at_stop_tokens_and_returns_n_sequences() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let sampler = client
        .create_sampler(&SamplerSource::BaseModel(BASE.into()))
        .await
        .unwrap();
    let free = client
        .sample(&sampler, &[1, 2], &params(40, 3))
        .await
        .unwrap();
    let stop_at = free.sequences[0].tokens[2];
    let p = SamplingParams {
        stop: Stop::Tokens(vec![stop_at]),
        n: 3,
        ..params(40, 3)
    };
    let out = client.sample(&sampler, &[1, 2], &p).await.unwrap();
    assert_eq!(out.sequences.len(), 3);
    let first = &out.sequences[0];
    assert_eq!(first.stop_reason, StopReason::Stop);
    assert_eq!(first.tokens.last(), Some(&stop_at));
    assert_eq!(
        fake.requests_to("/api/v1/asample")[1].body["sampling_params"]["stop"],
        serde_json::json!([stop_at])
    );
}

#[tokio::test]
async fn ppo_sends_its_clip_thresholds_and_invalid_input_fails_before_sending() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    let d = Datum::new(vec![1, 2], vec![2, 3], vec![-1.0, -1.0], vec![0.0, 1.0]).unwrap();
    let loss = LossConfig {
        loss_fn: LossFn::Ppo,
        clip_low_threshold: Some(0.9),
        clip_high_threshold: Some(1.1),
    };
    client.forward_backward(&run, &[d], loss).await.unwrap();
    let body = &fake.requests_to("/api/v1/forward_backward")[0].body;
    let input = &body["forward_backward_input"];
    assert_eq!(input["loss_fn"], "ppo");
    assert!(
        (input["loss_fn_config"]["clip_low_threshold"]
            .as_f64()
            .unwrap()
            - 0.9)
            .abs()
            < 1e-6
    );
    let inputs = input["data"][0]["loss_fn_inputs"].as_object().unwrap();
    let mut keys: Vec<&str> = inputs.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["advantages", "logprobs", "target_tokens"],
        "no mask key is sent to Tinker"
    );
    assert_eq!(inputs["target_tokens"]["dtype"], "int64");
    assert_eq!(inputs["logprobs"]["dtype"], "float32");

    assert!(Datum::new(vec![1, 2], vec![2], vec![0.0, 0.0], vec![0.0, 0.0]).is_err());
    assert!(Datum::new(vec![1], vec![2], vec![f32::NAN], vec![0.0]).is_err());
    let before = fake.requests().len();
    assert!(
        client
            .forward_backward(&run, &[], LossFn::Cispo.into())
            .await
            .is_err()
    );
    assert!(client.create_training_run(BASE, 0).await.is_err());
    assert_eq!(fake.requests().len(), before, "refused locally");
    assert!("dro".parse::<LossFn>().is_err());
    assert_eq!("cispo".parse::<LossFn>().unwrap(), LossFn::Cispo);
}

#[tokio::test]
async fn a_server_side_failure_of_a_training_request_is_returned() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    // A token outside the fake's 64-token vocabulary fails validation on the server.
    let d = Datum::new(vec![1, 2], vec![2, 999], vec![-1.0, -1.0], vec![0.0, 1.0]).unwrap();
    let err = client
        .forward_backward(&run, &[d], LossFn::ImportanceSampling.into())
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("outside the vocabulary") && text.contains("category: user"),
        "{text}"
    );
    assert!(
        !err.is_transient(),
        "an input the server rejects fails again"
    );
    let missing = client
        .load_state(&run, "tinker://nope/weights/x", false)
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("does not exist"), "{missing}");
}

#[tokio::test]
async fn jwt_exchange_replaces_the_key_on_later_requests() {
    let fake = fake(FakeTinkerOptions {
        jwt: true,
        ..Default::default()
    })
    .await;
    let client = tinker(&fake, fast_policy()).await;
    client.create_training_run(BASE, 2).await.unwrap();
    let token = &fake.requests_to("/api/v1/auth/token")[0];
    assert_eq!(token.header("x-api-key"), Some(fake.api_key()));
    let create = &fake.requests_to("/api/v1/create_model")[0];
    let sent = create.header("x-api-key").unwrap();
    assert!(sent.starts_with("eyJ"), "a JWT is sent, not the key");

    // An expired JWT is renewed once and the request replayed.
    fake.expire_jwt();
    client.create_training_run(BASE, 2).await.unwrap();
    assert_eq!(fake.requests_to("/api/v1/auth/token").len(), 2);
    let creates = fake.requests_to("/api/v1/create_model");
    assert_eq!(creates.len(), 3, "refused once, replayed once");
    assert_eq!(creates[1].header("x-api-key"), Some(sent));
    let renewed = creates[2].header("x-api-key").unwrap();
    assert!(renewed.starts_with("eyJ") && renewed != sent);
    assert_eq!(
        creates[1].header("x-idempotency-key"),
        creates[2].header("x-idempotency-key")
    );
}

#[tokio::test]
async fn large_batches_are_sent_in_chunks_and_merged() {
    let datums: Vec<Datum> = (0..5u32)
        .map(|i| {
            Datum::new(
                vec![1 + i, 2],
                vec![2, 3 + i],
                vec![-3.0, -3.0],
                vec![0.5, 1.0],
            )
            .unwrap()
        })
        .collect();
    let whole = {
        let fake = fake(FakeTinkerOptions::default()).await;
        let client = tinker(&fake, fast_policy()).await;
        let run = client.create_training_run(BASE, 4).await.unwrap();
        client
            .forward_backward(&run, &datums, LossFn::ImportanceSampling.into())
            .await
            .unwrap()
    };
    let fake = fake(FakeTinkerOptions {
        max_chunk_len: Some(2),
        ..Default::default()
    })
    .await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    let chunked = client
        .forward_backward(&run, &datums, LossFn::ImportanceSampling.into())
        .await
        .unwrap();
    let sent = fake.requests_to("/api/v1/forward_backward");
    let sizes: Vec<usize> = sent
        .iter()
        .map(|r| {
            r.body["forward_backward_input"]["data"]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    assert_eq!(sizes, [2, 2, 1]);
    let seqs: Vec<u64> = sent
        .iter()
        .map(|r| r.body["seq_id"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(chunked.logprobs, whole.logprobs, "outputs in datum order");
    let (a, b) = (chunked.loss().unwrap(), whole.loss().unwrap());
    assert!((a - b).abs() < 1e-9, "sums merge: {a} vs {b}");
    assert_eq!(chunked.metrics.get("num_tokens:sum"), Some(&10.0));
}

#[tokio::test]
async fn scripted_completions_come_back_with_their_logprobs() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    let sampler = client
        .create_sampler(&SamplerSource::BaseModel(BASE.into()))
        .await
        .unwrap();
    fake.push_completion(vec![10, 11, 12]);
    let out = client
        .sample(&sampler, &[1, 2], &params(8, 1))
        .await
        .unwrap();
    let seq = &out.sequences[0];
    assert_eq!(seq.tokens, [10, 11, 12]);
    assert_eq!(seq.stop_reason, StopReason::Stop);
    // The scripted tokens' logprobs are the policy's: training on them is on-policy.
    let d = datum(&[1, 2], &seq.tokens, &seq.logprobs, 1.0);
    let fb = client
        .forward_backward(&run, &[d], LossFn::ImportanceSampling.into())
        .await
        .unwrap();
    assert_eq!(&fb.logprobs[0][1..], seq.logprobs.as_slice());
    // The script is used up: the next sample is sampled again.
    let next = client
        .sample(&sampler, &[1, 2], &params(8, 1))
        .await
        .unwrap();
    assert_eq!(next.sequences[0].tokens.len(), 8);
}
