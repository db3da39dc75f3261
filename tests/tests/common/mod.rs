//! An in-process proxy in front of the fake upstream, with a sink that collects turns.

// Test support: failing loudly is the point, and not every test file uses every helper.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod bus;
pub mod daemon;
pub mod events;
pub mod memory_daemon;
pub mod rl_daemon;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_proxy::seams::{NoInjection, Protocol, SessionEvent, TurnRecord, TurnSink};
use metaclaw_proxy::{AppState, ProxyConfig, SharedState, UpstreamConfig};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

pub const UPSTREAM_KEY: &str = "sk-upstream-e2e";
pub const PROXY_KEY: &str = "mc-proxy-e2e";

#[derive(Default)]
pub struct Collect {
    pub turns: Mutex<Vec<TurnRecord>>,
    pub events: Mutex<Vec<SessionEvent>>,
    pub changed: Notify,
}

impl TurnSink for Collect {
    fn turn_finished(&self, turn: TurnRecord) {
        self.turns.lock().unwrap().push(turn);
        self.changed.notify_waiters();
    }
    fn queue_depth(&self) -> usize {
        0
    }
    fn session_event(&self, event: &SessionEvent) {
        self.events.lock().unwrap().push(event.clone());
        self.changed.notify_waiters();
    }
}

impl Collect {
    /// Waits (bounded) until `pred` holds for the collected turns.
    pub async fn wait_turns(&self, pred: impl Fn(&[TurnRecord]) -> bool) -> Vec<TurnRecord> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let notified = self.changed.notified();
            {
                let t = self.turns.lock().unwrap();
                if pred(&t) {
                    return t.clone();
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("condition on recorded turns not met within 10 s");
            }
        }
    }

    pub async fn wait_events(&self, pred: impl Fn(&[SessionEvent]) -> bool) -> Vec<SessionEvent> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let notified = self.changed.notified();
            {
                let e = self.events.lock().unwrap();
                if pred(&e) {
                    return e.clone();
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("condition on session events not met within 10 s");
            }
        }
    }
}

pub struct Harness {
    pub fake: FakeUpstream,
    pub sink: Arc<Collect>,
    pub state: SharedState,
    pub base: String,
    pub http: reqwest::Client,
    cancel: CancellationToken,
}

pub fn upstream(fake: &FakeUpstream, protocol: Protocol, name: &str) -> UpstreamConfig {
    UpstreamConfig {
        name: name.into(),
        protocol,
        base_url: match protocol {
            Protocol::Openai => fake.base_url_openai(),
            Protocol::Anthropic => fake.base_url_anthropic(),
        },
        model: Some("fake-model".into()),
        api_key: Some(UPSTREAM_KEY.into()),
        extra_headers: vec![],
    }
}

impl Harness {
    pub async fn start(upstream_protocol: Protocol) -> Harness {
        Self::with(|cfg, fake| cfg.upstreams = vec![upstream(fake, upstream_protocol, "primary")])
            .await
    }

    pub async fn with(tweak: impl FnOnce(&mut ProxyConfig, &FakeUpstream)) -> Harness {
        let fake = FakeUpstream::start(FakeOptions {
            api_key: Some(UPSTREAM_KEY.into()),
            ..FakeOptions::default()
        })
        .await
        .unwrap();
        let mut cfg = ProxyConfig::local(0);
        cfg.api_key = Some(PROXY_KEY.into());
        cfg.max_body_bytes = 1024 * 1024;
        tweak(&mut cfg, &fake);
        let sink = Arc::new(Collect::default());
        let state: SharedState = Arc::new(
            AppState::new(cfg, Arc::new(NoInjection), sink.clone(), "default".into()).unwrap(),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = metaclaw_proxy::guard(metaclaw_proxy::router(state.clone()), state.clone());
        let cancel = CancellationToken::new();
        tokio::spawn(metaclaw_proxy::serve(
            listener,
            app,
            state.clone(),
            cancel.clone(),
        ));
        Harness {
            fake,
            sink,
            state,
            base,
            http: reqwest::Client::new(),
            cancel,
        }
    }

    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .header("authorization", format!("Bearer {PROXY_KEY}"))
            .header("content-type", "application/json")
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
