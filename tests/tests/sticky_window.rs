//! Remembered blocks through the proxy when a conversation outgrows the in-memory window:
//! the old messages' blocks come back byte for byte from the store, and memory stays
//! within its bound.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::{Collect, PROXY_KEY, UPSTREAM_KEY, upstream};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_proxy::seams::{BoxFuture, Injection, Injector, Protocol, StickyStore, TurnContext};
use metaclaw_proxy::{AppState, Placement, ProxyConfig, SharedState};
use metaclaw_proxy::{Sticky, StickyLimits as Limits};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A different block every time it is asked, counting the asks.
#[derive(Default)]
struct Fresh(Mutex<usize>);

impl Injector for Fresh {
    fn context_block<'a>(&'a self, _turn: &'a TurnContext) -> BoxFuture<'a, Option<Injection>> {
        let n = {
            let mut n = self.0.lock().unwrap();
            *n += 1;
            *n
        };
        Box::pin(async move {
            Some(Injection {
                block: format!("## Skills\nblock {n}: {}", "x".repeat(200)),
                skills: vec![format!("skill-{n}")],
            })
        })
    }
}

/// Stands in for SQLite: keeps every block saved and counts what is read back.
#[derive(Default)]
struct Disk {
    rows: Mutex<HashMap<(String, String), Injection>>,
    read_back: Mutex<usize>,
}

impl StickyStore for Disk {
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        keys: &'a [String],
    ) -> BoxFuture<'a, Vec<(String, Injection)>> {
        let rows = self.rows.lock().unwrap();
        let found: Vec<_> = keys
            .iter()
            .filter_map(|k| {
                rows.get(&(session_id.to_string(), k.clone()))
                    .map(|i| (k.clone(), i.clone()))
            })
            .collect();
        *self.read_back.lock().unwrap() += found.len();
        Box::pin(async move { found })
    }
    fn save(&self, session_id: &str, key: &str, injection: &Injection) {
        self.rows
            .lock()
            .unwrap()
            .insert((session_id.into(), key.into()), injection.clone());
    }
}

const WINDOW: usize = 4;

#[tokio::test]
async fn a_conversation_longer_than_the_window_keeps_its_prefix_byte_identical() {
    let fake = FakeUpstream::start(FakeOptions {
        api_key: Some(UPSTREAM_KEY.into()),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let mut cfg = ProxyConfig::local(0);
    cfg.api_key = Some(PROXY_KEY.into());
    cfg.placement = Placement::User;
    cfg.upstreams = vec![upstream(&fake, Protocol::Openai, "primary")];
    let injector = Arc::new(Fresh::default());
    let disk = Arc::new(Disk::default());
    let mut state = AppState::new(
        cfg,
        injector.clone(),
        Arc::new(Collect::default()),
        "default".into(),
    )
    .unwrap();
    let limits = Limits {
        session_blocks: WINDOW,
        ..Limits::default()
    };
    state.sticky = Sticky::with_limits(disk.clone(), limits);
    let state: SharedState = Arc::new(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let cancel = CancellationToken::new();
    let app = metaclaw_proxy::router(state.clone());
    tokio::spawn(metaclaw_proxy::serve(
        listener,
        app,
        state.clone(),
        cancel.clone(),
    ));

    // Three times the window: every request resends the whole conversation, as agents do.
    let turns = 3 * WINDOW;
    let client = reqwest::Client::new();
    let mut messages = vec![json!({"role": "system", "content": "You are helpful."})];
    for turn in 0..turns {
        messages.push(json!({"role": "user", "content": format!("question {turn}")}));
        let r = client
            .post(format!("{base}/v1/chat/completions"))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", "long")
            .json(&json!({"model": "m", "messages": messages}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.text().await.unwrap();
        messages.push(json!({"role": "assistant", "content": format!("answer {turn}")}));
        assert!(
            state.sticky.blocks_in_memory() <= WINDOW,
            "turn {turn}: {} blocks in memory",
            state.sticky.blocks_in_memory()
        );
    }

    let fwd = fake.requests();
    assert_eq!(fwd.len(), turns);
    for (i, pair) in fwd.windows(2).enumerate() {
        let prev: &Value = &pair[0].body;
        let last =
            serde_json::to_string(prev["messages"].as_array().unwrap().last().unwrap()).unwrap();
        let end = pair[0].raw.find(&last).unwrap() + last.len();
        assert!(
            pair[1].raw.starts_with(&pair[0].raw[..end]),
            "turn {}: the prefix changed",
            i + 1
        );
    }
    // Every user message carries the block it got first, the oldest ones from the store.
    let final_raw = &fwd[turns - 1].raw;
    for n in 1..=turns {
        assert_eq!(
            final_raw.matches(&format!("block {n}:")).count(),
            1,
            "block {n}"
        );
    }
    assert_eq!(
        *injector.0.lock().unwrap(),
        turns,
        "one fresh block per new message"
    );
    assert!(
        *disk.read_back.lock().unwrap() > 0,
        "old blocks were read back"
    );
    cancel.cancel();
}
