//! The plugin API through the binary, as a plugin inside an agent uses it when the agent talks
//! to its provider directly (a subscription, no key in MetaClaw): the block for a message,
//! the same bytes when asked again, finished turns recorded and learned from, and a rule said
//! in one session in the next session's block. No provider is configured at all: memory's
//! rule-based extractor learns.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::daemon::{Home, PROXY_KEY, free_port};
use serde_json::{Value, json};

struct Daemon {
    home: Home,
    port: u16,
}

impl Daemon {
    async fn start() -> Daemon {
        let port = free_port();
        let home = Home::new(&format!(
            "skills:\n  enabled: false\nproxy:\n  port: {port}\n"
        ));
        home.start_daemon().await;
        Daemon { home, port }
    }

    async fn call(&self, key: &str, path: &str, body: Value) -> (u16, Value) {
        let r = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}{path}", self.port))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn plugin(&self, path: &str, body: Value) -> Value {
        let (status, v) = self.call(PROXY_KEY, path, body).await;
        assert_eq!(status, 200, "{path}: {v}");
        v
    }

    async fn admin(&self, path: &str) -> Value {
        self.home.admin_get(self.port, path).await
    }

    async fn context(&self, session: &str, prompt: &str) -> Value {
        self.plugin(
            "/v1/plugin/context",
            json!({"session_id": session, "agent": "claude-code", "prompt": prompt}),
        )
        .await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_told_through_the_plugin_api_is_in_the_next_sessions_block() {
    let d = Daemon::start().await;
    // The agent key is required, and a body that is not the route's is refused in words.
    let (status, _) = d
        .call(
            "wrong-key",
            "/v1/plugin/context",
            json!({"session_id": "a", "agent": "x", "prompt": "hi"}),
        )
        .await;
    assert_eq!(status, 401);
    let (status, e) = d
        .call(PROXY_KEY, "/v1/plugin/turn", json!({"session_id": "a"}))
        .await;
    assert_eq!(status, 400);
    assert!(
        e["error"]["message"].as_str().unwrap().contains("agent"),
        "{e}"
    );
    let (status, e) = d
        .call(
            PROXY_KEY,
            "/v1/plugin/context",
            json!({"session_id": "a", "agent": "x", "prompt": " "}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        e["error"]["message"].as_str().unwrap().contains("prompt"),
        "{e}"
    );

    // Status says what learns without a model.
    let o = d.home.run(&["status", "--json"]);
    let status: Value = serde_json::from_slice(&o.stdout).unwrap();
    let line = status["learning_model"]["line"].as_str().unwrap();
    assert!(
        line.starts_with("memories read by rules only (no model)"),
        "{line}"
    );

    // Session one: nothing learned yet; the user states a rule; the session ends.
    let first = d
        .context("s1", "From now on, always write dates as YYYY-MM-DD.")
        .await;
    assert_eq!(first["block"], "", "{first}");
    d.plugin(
        "/v1/plugin/turn",
        json!({"session_id": "s1", "agent": "claude-code",
               "user": "From now on, always write dates as YYYY-MM-DD.",
               "assistant": "Understood: dates as YYYY-MM-DD.", "tools": ["Read"]}),
    )
    .await;
    d.plugin("/v1/plugin/session_end", json!({"session_id": "s1"}))
        .await;

    // Recorded like a proxied turn, marked with how it arrived, the user's words in it.
    let turns = d.admin("/api/turns?session=s1").await;
    let turns = turns["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{turns:?}");
    assert_eq!(turns[0]["upstream"], "plugin:claude-code");
    assert_eq!(turns[0]["turn_type"], "main");
    assert!(
        turns[0]["request_json"]
            .as_str()
            .unwrap()
            .contains("always write dates as YYYY-MM-DD")
    );
    assert!(
        turns[0]["reply_json"]
            .as_str()
            .unwrap()
            .contains("\"Read\"")
    );

    // Learned at the session's end, by the rules (no model is configured).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let units = d.admin("/api/memory").await;
        if units["total"].as_u64().unwrap_or(0) > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "nothing learned: {units}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Session two, a request sharing no word with the rule: the rule stands in its block,
    // and asking again for the same message gives the same bytes.
    let second = d.context("s2", "When did the last release go out?").await;
    let block = second["block"].as_str().unwrap();
    assert!(block.starts_with("<metaclaw-context>"), "{second}");
    assert!(block.contains("YYYY-MM-DD"), "{block}");
    assert!(!second["memories"].as_array().unwrap().is_empty());
    let again = d.context("s2", "When did the last release go out?").await;
    assert_eq!(again["block"], second["block"]);
    // The same under the admin API, with the admin token (what the `metaclaw hook` command
    // holds); the agent key does not open it.
    let token = d.home.admin_token();
    let ask = json!({"session_id": "s2", "agent": "claude-code", "prompt": "When did the last release go out?"});
    let (status, admin) = d.call(&token, "/api/plugin/context", ask.clone()).await;
    assert_eq!(status, 200, "{admin}");
    assert_eq!(admin["block"], second["block"]);
    let (status, _) = d.call(PROXY_KEY, "/api/plugin/context", ask).await;
    assert_eq!(status, 401);

    // The turn that followed records what it was given.
    d.plugin(
        "/v1/plugin/turn",
        json!({"session_id": "s2", "agent": "claude-code",
               "user": "When did the last release go out?", "assistant": "On 2026-11-30."}),
    )
    .await;
    d.plugin("/v1/plugin/session_end", json!({"session_id": "s2"}))
        .await;
    let usage = d.admin("/api/turns/usage?session=s2").await;
    let turn = &usage["turns"][0];
    assert_eq!(turn["injected_memories"], second["memories"], "{usage}");
    assert!(turn["block_tokens"].as_u64().unwrap() > 0, "{usage}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agents_envelope_is_taken_off_what_a_plugin_hands_over() {
    let d = Daemon::start().await;
    // OpenClaw's arrival stamp and runtime line around the words: recorded without them.
    let stamped =
        "[Sun 2026-12-06 18:17 UTC] Rename the report file.\n\nRuntime: agent=main | sessionId=e1";
    d.plugin(
        "/v1/plugin/turn",
        json!({"session_id": "e1", "agent": "openclaw", "user": stamped, "assistant": "Done."}),
    )
    .await;
    let (status, _) = d
        .call(&d.home.admin_token(), "/api/recorder/flush", json!({}))
        .await;
    assert_eq!(status, 200);
    let turns = d.admin("/api/turns?session=e1").await;
    let request = turns["turns"][0]["request_json"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(request.contains("\"Rename the report file.\""), "{request}");
    assert!(
        !request.contains("Runtime:") && !request.contains("18:17"),
        "{request}"
    );
    assert_eq!(turns["turns"][0]["upstream"], "plugin:openclaw");

    // A message that is nothing but an envelope holds no words to record; said so.
    let (status, e) = d
        .call(
            PROXY_KEY,
            "/v1/plugin/turn",
            json!({"session_id": "e1", "agent": "openclaw",
                   "user": "<system-reminder>today is Sunday</system-reminder>"}),
        )
        .await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("envelope"),
        "{e}"
    );
    // The block for a stamped prompt is the block for its words: the same bytes.
    let plain = d.context("e2", "Rename the report file.").await;
    let wrapped = d
        .context("e2", "[Sun 2026-12-06 18:20 UTC] Rename the report file.")
        .await;
    assert_eq!(plain["block"], wrapped["block"]);
}
