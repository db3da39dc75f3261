//! Every future outcome, back-pressure, retries, auth failures, cancellation and time-outs
//! of the Tinker client against the fake backend's fault injection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{eventually, fake, fast_policy, tinker};
use metaclaw_e2e::fake_tinker::{FakeTinkerOptions, Fault, FutureScript};
use metaclaw_learn::tinker::{TinkerClient, TinkerConfig};
use metaclaw_learn::{
    AdamParams, Backend, BackendKind, Datum, LearnError, LossFn, SamplerSource, SamplingParams,
};

const BASE: &str = "Qwen/Qwen3-4B";

fn datum() -> Datum {
    Datum::new(
        vec![1, 2, 3],
        vec![2, 3, 4],
        vec![0.0, -2.0, -2.0],
        vec![0.0, 1.0, 1.0],
    )
    .unwrap()
}

fn sp() -> SamplingParams {
    SamplingParams {
        max_tokens: 4,
        seed: Some(1),
        ..SamplingParams::default()
    }
}

/// Polls of `retrieve_future` per request id, in order of first poll.
fn polls(fake: &metaclaw_e2e::fake_tinker::FakeTinker) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for r in fake.requests_to("/api/v1/retrieve_future") {
        let id = r.body["request_id"].as_str().unwrap().to_owned();
        match out.iter_mut().find(|(i, _)| *i == id) {
            Some(e) => e.1 += 1,
            None => out.push((id, 1)),
        }
    }
    out
}

#[tokio::test]
async fn try_again_then_ready() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_script("forward_backward", FutureScript::TryAgain(3));
    let out = client
        .forward_backward(&run, &[datum()], LossFn::ImportanceSampling.into())
        .await
        .unwrap();
    assert!(out.loss().is_some());
    let (_, n) = polls(&fake).pop().unwrap();
    assert_eq!(n, 4, "three try_again answers, then the result");
    let iterations: Vec<String> = fake
        .requests_to("/api/v1/retrieve_future")
        .iter()
        .rev()
        .take(4)
        .map(|r| r.header("x-tinker-request-iteration").unwrap().to_owned())
        .collect();
    assert_eq!(iterations, ["3", "2", "1", "0"]);
    let last = fake.requests_to("/api/v1/retrieve_future").pop().unwrap();
    assert_eq!(
        last.header("x-tinker-request-type"),
        Some("forward_backward")
    );
    assert_eq!(last.body["allow_metadata_only"], false);
}

#[tokio::test]
async fn http_408_then_ready() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_script("optim_step", FutureScript::Timeout408(2));
    let out = client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap();
    assert_eq!(out.metrics.get("step:max"), Some(&1.0));
    assert_eq!(polls(&fake).pop().unwrap().1, 3);
}

#[tokio::test]
async fn expired_training_result_is_an_error_not_a_second_run() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_script("forward_backward", FutureScript::Expired);
    let err = client
        .forward_backward(&run, &[datum()], LossFn::ImportanceSampling.into())
        .await
        .unwrap_err();
    assert!(matches!(err, LearnError::Expired { .. }), "{err:?}");
    assert!(err.to_string().contains("expired"));
    assert_eq!(
        fake.requests_to("/api/v1/forward_backward").len(),
        1,
        "not resubmitted"
    );
    assert_eq!(fake.model(&run.model_id).unwrap().forward_backward_calls, 1);
}

#[tokio::test]
async fn expired_sample_is_resubmitted() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let sampler = client
        .create_sampler(&SamplerSource::BaseModel(BASE.into()))
        .await
        .unwrap();
    fake.push_script("sample", FutureScript::Expired);
    let out = client.sample(&sampler, &[1, 2], &sp()).await.unwrap();
    assert_eq!(out.sequences[0].tokens.len(), 4);
    let subs = fake.requests_to("/api/v1/asample");
    assert_eq!(subs.len(), 2);
    assert_eq!(
        subs[1].body["seq_id"], 1,
        "the resubmission takes a new sampling seq id"
    );
}

#[tokio::test]
async fn a_failed_request_returns_the_backend_message() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_script(
        "save_weights",
        FutureScript::Fail {
            message: "disk quota exceeded".into(),
            category: "server".into(),
        },
    );
    let err = client.save_state(&run, "ckpt").await.unwrap_err();
    match &err {
        LearnError::Backend {
            message, status, ..
        } => {
            assert!(
                message.contains("disk quota exceeded") && message.contains("server"),
                "{message}"
            );
            assert_eq!(*status, None);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string().contains("saving the training state"),
        "{err}"
    );
    assert!(
        err.is_transient(),
        "a server-side failure may pass next time"
    );
}

#[tokio::test]
async fn rate_limited_sample_waits_for_retry_after_then_succeeds() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let sampler = client
        .create_sampler(&SamplerSource::BaseModel(BASE.into()))
        .await
        .unwrap();
    fake.push_fault(
        "/api/v1/asample",
        Fault::Status {
            status: 429,
            retry_after: Some(1),
        },
    );
    let started = Instant::now();
    let out = client.sample(&sampler, &[1, 2], &sp()).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited the Retry-After second"
    );
    assert_eq!(out.sequences.len(), 1);
    let subs = fake.requests_to("/api/v1/asample");
    assert_eq!(subs.len(), 2);
    assert_eq!(
        subs[0].header("x-idempotency-key"),
        subs[1].header("x-idempotency-key")
    );
}

#[tokio::test]
async fn rate_limiting_without_end_gives_up() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let policy = metaclaw_learn::RetryPolicy {
        max_rate_limited: 3,
        ..fast_policy()
    };
    let client = tinker(&fake, policy).await;
    let sampler = client
        .create_sampler(&SamplerSource::BaseModel(BASE.into()))
        .await
        .unwrap();
    fake.push_faults(
        "/api/v1/asample",
        Fault::Status {
            status: 429,
            retry_after: None,
        },
        10,
    );
    let err = client.sample(&sampler, &[1, 2], &sp()).await.unwrap_err();
    assert!(
        matches!(
            err,
            LearnError::Backend {
                status: Some(429),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(fake.requests_to("/api/v1/asample").len(), 4);
}

#[tokio::test]
async fn server_errors_are_retried_with_the_same_idempotency_key() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_faults(
        "/api/v1/forward_backward",
        Fault::Status {
            status: 502,
            retry_after: None,
        },
        2,
    );
    client
        .forward_backward(&run, &[datum()], LossFn::ImportanceSampling.into())
        .await
        .unwrap();
    let subs = fake.requests_to("/api/v1/forward_backward");
    assert_eq!(subs.len(), 3);
    assert!(
        subs.iter()
            .all(|r| r.header("x-idempotency-key") == subs[0].header("x-idempotency-key"))
    );
    assert!(subs.iter().all(|r| r.body["seq_id"] == 1));
    assert_eq!(fake.model(&run.model_id).unwrap().forward_backward_calls, 1);
}

#[tokio::test]
async fn a_lost_answer_is_resent_and_runs_once() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_fault("/api/v1/optim_step", Fault::DisconnectAfterProcessing);
    let out = client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap();
    assert_eq!(out.metrics.get("step:max"), Some(&1.0));
    assert_eq!(fake.requests_to("/api/v1/optim_step").len(), 2);
    assert_eq!(fake.idempotent_replays(), 1);
    assert_eq!(
        fake.model(&run.model_id).unwrap().weights_version,
        1,
        "the step ran once"
    );

    fake.push_fault("/api/v1/create_sampling_session", Fault::Disconnect);
    client
        .create_sampler(&SamplerSource::BaseModel(BASE.into()))
        .await
        .unwrap();
    assert_eq!(fake.requests_to("/api/v1/create_sampling_session").len(), 2);
}

#[tokio::test]
async fn persistent_server_errors_end_in_a_clear_error_without_the_key() {
    let fake = fake(FakeTinkerOptions {
        echo_key_in_errors: true,
        ..Default::default()
    })
    .await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_faults(
        "/api/v1/optim_step",
        Fault::Status {
            status: 503,
            retry_after: None,
        },
        5,
    );
    let err = client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap_err();
    assert_eq!(
        fake.requests_to("/api/v1/optim_step").len(),
        5,
        "one try and four retries"
    );
    let text = err.to_string();
    assert!(
        matches!(
            err,
            LearnError::Backend {
                status: Some(503),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        text.contains("Tinker") && text.contains("optimizer step") && text.contains("HTTP 503"),
        "{text}"
    );
    assert!(
        text.contains("injected 503"),
        "keeps the backend's message: {text}"
    );
    assert!(!text.contains(fake.api_key()), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    assert!(err.is_transient());

    // The refused step never ran, so its sequence id is reused: no gap for the server to
    // wait on.
    assert_eq!(fake.pending_faults(), 0);
    client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap();
    let sent: Vec<_> = fake
        .requests_to("/api/v1/optim_step")
        .iter()
        .map(|r| r.body["seq_id"].clone())
        .collect();
    assert!(sent.iter().all(|s| *s == 1), "{sent:?}");
    assert_eq!(fake.model(&run.model_id).unwrap().weights_version, 1);
}

#[tokio::test]
async fn a_wrong_key_is_an_auth_error_that_does_not_show_the_key() {
    let fake = fake(FakeTinkerOptions {
        echo_key_in_errors: true,
        ..Default::default()
    })
    .await;
    let wrong = "tml-wrong-secret-key-987654321";
    let err = TinkerClient::connect(TinkerConfig {
        kind: BackendKind::Tinker,
        base_url: fake.base_url(),
        api_key: wrong.into(),
        policy: fast_policy(),
    })
    .await
    .unwrap_err();
    assert!(
        matches!(err, LearnError::Auth { status: 401, .. }),
        "{err:?}"
    );
    let text = format!("{err} {err:?}");
    assert!(!text.contains(wrong), "{text}");
    assert!(text.contains("refused the API key"), "{text}");
    assert!(!err.is_transient());
    assert_eq!(fake.requests().len(), 1, "auth failures are not retried");
}

#[tokio::test]
async fn unreachable_backend_is_a_network_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let err = TinkerClient::connect(TinkerConfig {
        kind: BackendKind::Mint,
        base_url: format!("http://127.0.0.1:{port}/train"),
        api_key: "sk-mint-abcdef123456".into(),
        policy: fast_policy(),
    })
    .await
    .unwrap_err();
    assert!(matches!(err, LearnError::Network { .. }), "{err:?}");
    assert!(err.to_string().starts_with("could not reach MinT"), "{err}");
}

#[tokio::test]
async fn heartbeats_are_sent_while_the_client_lives() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let policy = metaclaw_learn::RetryPolicy {
        heartbeat_interval: Duration::from_millis(20),
        ..fast_policy()
    };
    let client = tinker(&fake, policy).await;
    let session = client.session().id.clone();
    assert!(common::eventually(|| fake.heartbeats(&session) >= 3).await);
    assert!(eventually(|| client.session().heartbeats_sent() >= 3).await);
    let hb = &fake.requests_to("/api/v1/session_heartbeat")[0];
    assert_eq!(hb.body["session_id"], session.as_str());
    assert_eq!(hb.body["type"], "session_heartbeat");
    assert_eq!(hb.header("x-api-key"), Some(fake.api_key()));
}

#[tokio::test]
async fn shutdown_cancels_a_call_in_flight() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = std::sync::Arc::new(tinker(&fake, fast_policy()).await);
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_script("forward_backward", FutureScript::TryAgain(1_000_000));
    let task = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .forward_backward(&run, &[datum()], LossFn::ImportanceSampling.into())
                .await
        })
    };
    assert!(eventually(|| fake.requests_to("/api/v1/retrieve_future").len() >= 3).await);
    client.session().shutdown();
    let err = task.await.unwrap().unwrap_err();
    assert!(matches!(err, LearnError::Cancelled { .. }), "{err:?}");
}

#[tokio::test]
async fn a_result_that_never_comes_times_out() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let policy = metaclaw_learn::RetryPolicy {
        op_timeout: Duration::from_millis(150),
        ..fast_policy()
    };
    let client = tinker(&fake, policy).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    fake.push_script("optim_step", FutureScript::TryAgain(1_000_000));
    let err = client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap_err();
    assert!(matches!(err, LearnError::TimedOut { .. }), "{err:?}");
}

#[tokio::test]
async fn close_ends_the_heartbeat() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let policy = metaclaw_learn::RetryPolicy {
        heartbeat_interval: Duration::from_millis(10),
        ..fast_policy()
    };
    let client = tinker(&fake, policy).await;
    let session = client.session().id.clone();
    assert!(eventually(|| fake.heartbeats(&session) >= 1).await);
    // close() returns only once the heartbeat task has ended; a task that kept running
    // would make this time out.
    tokio::time::timeout(Duration::from_secs(5), client.session().close())
        .await
        .expect("the heartbeat task ends");
    let run = client.create_training_run(BASE, 4).await.unwrap_err();
    assert!(
        matches!(run, LearnError::Cancelled { .. }),
        "a closed client refuses work: {run:?}"
    );
}

#[tokio::test]
async fn a_session_the_server_ended_is_reported() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let policy = metaclaw_learn::RetryPolicy {
        heartbeat_interval: Duration::from_millis(10),
        ..fast_policy()
    };
    let client = tinker(&fake, policy).await;
    assert!(eventually(|| client.session().heartbeats_sent() >= 1).await);
    assert!(!client.session().expired());
    fake.end_session(client.session().id.as_str());
    assert!(
        eventually(|| client.session().expired()).await,
        "a 410 heartbeat marks the session ended"
    );
    let err = client.create_training_run(BASE, 4).await.unwrap_err();
    assert!(
        matches!(
            err,
            LearnError::Backend {
                status: Some(410),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("has ended"), "{err}");
}

#[tokio::test]
async fn faults_and_scripts_can_be_queued_over_http() {
    let fake = fake(FakeTinkerOptions::default()).await;
    let client = tinker(&fake, fast_policy()).await;
    let run = client.create_training_run(BASE, 4).await.unwrap();
    let http = reqwest::Client::new();
    let admin = |p: &str| format!("{}/_fake/{p}", fake.base_url());
    let r = http
        .post(admin("faults"))
        .json(&serde_json::json!({"path": "/api/v1/optim_step", "status": 500, "times": 2}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    let r = http
        .post(admin("scripts"))
        .json(&serde_json::json!({"op": "optim_step", "try_again": 2}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    client
        .optim_step(&run, AdamParams::default())
        .await
        .unwrap();
    assert_eq!(
        fake.requests_to("/api/v1/optim_step").len(),
        3,
        "two injected 500s, then accepted"
    );
    assert_eq!(
        polls(&fake).pop().unwrap().1,
        3,
        "two try_again, then the result"
    );
    let state: serde_json::Value = http
        .get(admin("state"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state["models"][&run.model_id]["weights_version"], 1);
    let bad = http
        .post(admin("faults"))
        .json(&serde_json::json!({"path": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
}
