//! The injection hook: main turns get the injector's block, side turns and metadata do not.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::sync::{Arc, Mutex};

use common::{Collect, PROXY_KEY, UPSTREAM_KEY, upstream};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_proxy::seams::{BoxFuture, Injection, Injector, Protocol, TurnContext};
use metaclaw_proxy::{AppState, Placement, ProxyConfig, SharedState};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Spy(Mutex<Vec<String>>);

/// Records each query and answers a different block every time, so a test can tell a
/// remembered block from a freshly computed one.
impl Injector for Spy {
    fn context_block<'a>(&'a self, turn: &'a TurnContext) -> BoxFuture<'a, Option<Injection>> {
        let mut queries = self.0.lock().unwrap();
        queries.push(turn.query.clone());
        let n = queries.len();
        Box::pin(async move {
            Some(Injection {
                block: format!("## Skills\nAlways run the tests. (block {n})"),
                skills: vec![format!("skill-{n}")],
            })
        })
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

/// Sends `body` as a main turn of session `s1` on the client protocol's route.
async fn send(base: &str, protocol: Protocol, body: &Value) {
    let client = reqwest::Client::new();
    let req = match protocol {
        Protocol::Openai => client
            .post(format!("{base}/v1/chat/completions"))
            .bearer_auth(PROXY_KEY),
        Protocol::Anthropic => client
            .post(format!("{base}/v1/messages"))
            .header("x-api-key", PROXY_KEY),
    };
    let r = req
        .header("x-session-id", "s1")
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        !r.text().await.unwrap().is_empty(),
        "a whole reply, streamed or not"
    );
}

/// The bytes of a forwarded request up to the end of its last message.
fn through_last_message(raw: &str, body: &Value) -> String {
    let last = serde_json::to_string(body["messages"].as_array().unwrap().last().unwrap()).unwrap();
    let end = raw.find(&last).unwrap() + last.len();
    raw[..end].to_string()
}

/// Three turns of one conversation: a question, a new question (streamed), then a tool round
/// on it. Each request
/// must start with every byte the previous one sent through its last message, so the
/// provider's prompt cache covers the whole earlier conversation.
async fn three_turns_keep_the_prefix(protocol: Protocol) {
    let (fake, spy, base, cancel) = start(protocol, Placement::User).await;
    let (turns, tool_call, tool_result) = match protocol {
        Protocol::Openai => (
            json!([{"role":"system","content":"You are helpful."},{"role":"user","content":"how do I test this?"}]),
            json!({"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"run","arguments":"{}"}}]}),
            json!({"role":"tool","tool_call_id":"call_1","content":"ok"}),
        ),
        Protocol::Anthropic => (
            json!([{"role":"user","content":"how do I test this?"}]),
            json!({"role":"assistant","content":[{"type":"tool_use","id":"tu_1","name":"run","input":{}}]}),
            json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":"ok"}]}),
        ),
    };
    let mut messages = turns.as_array().unwrap().clone();
    let body = |messages: &Vec<Value>| {
        let mut b =
            json!({"model":"m","max_tokens":50,"messages":messages,"tools":[{"name":"run"}]});
        if protocol == Protocol::Openai {
            b["tools"] = json!([{"type":"function","function":{"name":"run","parameters":{"type":"object"}}}]);
        } else {
            b["tools"] = json!([{"name":"run","input_schema":{"type":"object"}}]);
            b["system"] = json!("You are helpful.");
        }
        b
    };
    send(&base, protocol, &body(&messages)).await;
    messages.push(json!({"role":"assistant","content":"Run the suite."}));
    messages.push(json!({"role":"user","content":"and how do I debug a failure?"}));
    // The middle turn streams: injection does not depend on how the reply comes back.
    let mut streamed = body(&messages);
    streamed["stream"] = json!(true);
    send(&base, protocol, &streamed).await;
    messages.push(tool_call);
    messages.push(tool_result);
    send(&base, protocol, &body(&messages)).await;

    let fwd = fake.requests();
    assert_eq!(fwd.len(), 3);
    for pair in fwd.windows(2) {
        let before = through_last_message(&pair[0].raw, &pair[0].body);
        assert!(
            pair[1].raw.starts_with(&before),
            "prefix changed:\n{before}\n---\n{}",
            pair[1].raw
        );
    }
    assert_eq!(
        spy.0.lock().unwrap().clone(),
        vec!["how do I test this?", "and how do I debug a failure?"],
        "a resent message reuses its block instead of retrieving again"
    );
    let first = fwd[0].raw.matches("(block 1)").count();
    let third = &fwd[2].raw;
    assert_eq!((first, third.matches("(block 1)").count()), (1, 1));
    assert_eq!(third.matches("(block 2)").count(), 1);
    cancel.cancel();
}

#[tokio::test]
async fn openai_prefix_is_byte_identical_across_three_turns() {
    three_turns_keep_the_prefix(Protocol::Openai).await;
}

#[tokio::test]
async fn anthropic_prefix_is_byte_identical_across_three_turns() {
    three_turns_keep_the_prefix(Protocol::Anthropic).await;
}

#[tokio::test]
async fn system_placement_pins_the_first_block_for_the_session() {
    let (fake, spy, base, cancel) = start(Protocol::Openai, Placement::System).await;
    let mut messages = vec![json!({"role":"user","content":"how do I test this?"})];
    for next in ["and lint it?", "and ship it?"] {
        send(
            &base,
            Protocol::Openai,
            &json!({"model":"m","messages":messages}),
        )
        .await;
        messages.push(json!({"role":"assistant","content":"ok"}));
        messages.push(json!({"role":"user","content":next}));
    }
    send(
        &base,
        Protocol::Openai,
        &json!({"model":"m","messages":messages}),
    )
    .await;
    let systems: Vec<Value> = fake
        .requests()
        .iter()
        .map(|r| r.body["messages"][0].clone())
        .collect();
    assert_eq!(systems.len(), 3);
    assert!(systems.iter().all(|s| s == &systems[0]), "{systems:?}");
    assert!(
        systems[0]["content"]
            .as_str()
            .unwrap()
            .contains("(block 1)")
    );
    assert_eq!(spy.0.lock().unwrap().len(), 1);
    cancel.cancel();
}

/// OpenClaw's shape through translation: an OpenAI client with its trailing internal-context
/// message, an Anthropic upstream. Retrieval reads the user's words, the block rides on the
/// user's message (not the envelope), and what the next turn resends — tools, system, the
/// user's message with its block — is the same text, with cache breakpoints on it.
#[tokio::test]
async fn an_openclaw_conversation_translated_to_anthropic_keeps_its_cacheable_prefix() {
    let (fake, spy, base, cancel) = start(Protocol::Anthropic, Placement::User).await;
    let ctx = json!({"role":"user","content":[{"type":"text","text":"<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nActive exec sessions: none\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"}]});
    let first = json!({"role":"user","content":"[Thu 2026-12-03 17:38 UTC] what's the weather tomorrow in Rome?\n\nRuntime: agent=main | host=vm"});
    let tools =
        json!([{"type":"function","function":{"name":"exec","parameters":{"type":"object"}}}]);
    let system = json!({"role":"system","content":"You are a personal assistant."});
    let turn1 = json!({"model":"m","stream":true,"messages":[system, first, ctx],"tools":tools});
    let turn2 = json!({"model":"m","stream":true,"tools":tools,"messages":[
        system, first,
        {"role":"assistant","content":"Sunny."},
        {"role":"user","content":"[Thu 2026-12-03 17:40 UTC] and in Paris?"},
        ctx]});
    send(&base, Protocol::Openai, &turn1).await;
    send(&base, Protocol::Openai, &turn2).await;
    assert_eq!(
        spy.0.lock().unwrap().clone(),
        vec!["what's the weather tomorrow in Rome?", "and in Paris?"],
        "retrieval reads the user's words, never the envelope"
    );
    let fwd = fake.requests();
    assert_eq!(fwd.len(), 2);
    let (a, b) = (&fwd[0].body, &fwd[1].body);
    let eph = json!({"type":"ephemeral"});
    for body in [a, b] {
        assert_eq!(body["system"][0]["cache_control"], eph, "{body}");
        assert_eq!(body["tools"][0]["cache_control"], eph, "{body}");
    }
    assert_eq!(a["system"], b["system"]);
    assert_eq!(a["tools"], b["tools"]);
    // Turn 1: the user's block (with MetaClaw's block 1) carries the breakpoint; the
    // envelope after it gets neither the block nor a breakpoint.
    let user_block = &a["messages"][0]["content"][0];
    assert_eq!(user_block["cache_control"], eph, "{a}");
    assert!(user_block["text"].as_str().unwrap().contains("(block 1)"));
    let envelope = &a["messages"][0]["content"][1];
    assert!(!envelope.to_string().contains("(block"), "{a}");
    assert!(envelope.get("cache_control").is_none(), "{a}");
    // Turn 2 resends that text unchanged, and the new breakpoint is on the new question.
    let resent = &b["messages"][0]["content"];
    let resent_text = resent
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| resent[0]["text"].as_str().unwrap().to_string());
    assert_eq!(resent_text, user_block["text"].as_str().unwrap());
    let newest = &b["messages"][2]["content"][0];
    assert_eq!(newest["cache_control"], eph, "{b}");
    assert!(newest["text"].as_str().unwrap().contains("(block 2)"));
    cancel.cancel();
}
