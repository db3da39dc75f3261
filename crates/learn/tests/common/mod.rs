//! Shared setup for the backend protocol tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod qwen;

use std::time::Duration;

use metaclaw_e2e::fake_tinker::{FakeTinker, FakeTinkerOptions};
use metaclaw_learn::tinker::{TinkerClient, TinkerConfig};
use metaclaw_learn::{BackendKind, RetryPolicy};

/// Short delays so retries and polls run fast; bounds stay as in production.
pub fn fast_policy() -> RetryPolicy {
    RetryPolicy {
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(40),
        default_retry_after: Duration::from_millis(10),
        poll_interval: Duration::from_millis(2),
        op_timeout: Duration::from_secs(20),
        request_timeout: Duration::from_secs(10),
        heartbeat_interval: Duration::from_secs(3600),
        max_retries: 4,
        ..RetryPolicy::default()
    }
}

pub async fn fake(opts: FakeTinkerOptions) -> FakeTinker {
    FakeTinker::start(opts).await.unwrap()
}

pub async fn tinker(fake: &FakeTinker, policy: RetryPolicy) -> TinkerClient {
    TinkerClient::connect(TinkerConfig {
        kind: BackendKind::Tinker,
        base_url: fake.base_url(),
        api_key: fake.api_key().to_owned(),
        policy,
    })
    .await
    .unwrap()
}

/// Polls `cond` every few milliseconds for up to 10 s.
pub async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..2000 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    false
}
