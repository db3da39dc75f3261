//! The injection hook: main turns get the injector's block, side turns and metadata do not.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::sync::{Arc, Mutex};

use common::{Collect, PROXY_KEY, UPSTREAM_KEY, upstream};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_proxy::seams::{BoxFuture, Injector, Protocol, TurnContext};
use metaclaw_proxy::{AppState, Placement, ProxyConfig, SharedState};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Spy(Mutex<Vec<String>>);

impl Injector for Spy {
    fn context_block<'a>(&'a self, turn: &'a TurnContext) -> BoxFuture<'a, Option<String>> {
        self.0.lock().unwrap().push(turn.query.clone());
        Box::pin(async { Some("## Skills\nAlways run the tests.".to_string()) })
    }
}

async fn start(
    protocol: Protocol,
    placement: Placement,
) -> (FakeUpstream, Arc<Spy>, String, CancellationToken) {
    let fake = FakeUpstream::start(FakeOptions {
        api_key: Some(UPSTREAM_KEY.into()),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let mut cfg = ProxyConfig::local(0);
    cfg.api_key = Some(PROXY_KEY.into());
    cfg.placement = placement;
    cfg.upstreams = vec![upstream(&fake, protocol, "primary")];
    let spy = Arc::new(Spy::default());
    let state: SharedState = Arc::new(
        AppState::new(
            cfg,
            spy.clone(),
            Arc::new(Collect::default()),
            "default".into(),
        )
        .unwrap(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let cancel = CancellationToken::new();
    let app = metaclaw_proxy::router(state.clone());
    tokio::spawn(metaclaw_proxy::serve(listener, app, state, cancel.clone()));
    (fake, spy, base, cancel)
}

#[tokio::test]
async fn main_turn_gets_the_block_on_the_newest_user_message() {
    let (fake, spy, base, cancel) = start(Protocol::Openai, Placement::User).await;
    let body = json!({"model":"m","messages":[
        {"role":"system","content":"S"},
        {"role":"user","content":"old question"},
        {"role":"assistant","content":"old answer"},
        {"role":"user","content":"Conversation info (untrusted metadata):\n```json\n{\"a\":1}\n```\nhow do I test this?"}]});
    let r = reqwest::Client::new()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(PROXY_KEY)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        spy.0.lock().unwrap().clone(),
        vec!["how do I test this?".to_string()]
    );
    let fwd = &fake.requests()[0].body;
    let msgs = fwd["messages"].as_array().unwrap();
    assert_eq!(
        msgs[0]["content"], "S",
        "system prompt untouched with user placement"
    );
    assert_eq!(msgs[1]["content"], "old question");
    let newest = msgs[3]["content"].as_str().unwrap();
    assert!(newest.contains("<metaclaw-context>") && newest.contains("Always run the tests."));
    cancel.cancel();
}

#[tokio::test]
async fn side_turns_pass_untouched_and_system_placement_works_for_anthropic() {
    let (fake, spy, base, cancel) = start(Protocol::Anthropic, Placement::System).await;
    let body = json!({"model":"m","max_tokens":10,"system":"Base","messages":[{"role":"user","content":"q"}]});
    let client = reqwest::Client::new();
    client
        .post(format!("{base}/v1/messages"))
        .header("x-api-key", PROXY_KEY)
        .header("x-turn-type", "side")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(
        spy.0.lock().unwrap().is_empty(),
        "no retrieval for side turns"
    );
    assert_eq!(fake.requests()[0].body["system"], "Base");
    client
        .post(format!("{base}/v1/messages"))
        .header("x-api-key", PROXY_KEY)
        .json(&body)
        .send()
        .await
        .unwrap();
    let system = fake.requests()[1].body["system"]
        .as_str()
        .map(str::to_string)
        .unwrap();
    assert!(system.starts_with("Base\n\n<metaclaw-context>"), "{system}");
    let last: &Value = &fake.requests()[1].body["messages"][0];
    assert_eq!(last["content"], "q");
    cancel.cancel();
}
