//! Skill evolution through the real binary against a fake evolver model: valid, malformed,
//! duplicate, hostile and empty answers; the session-end trigger; and that an evolver that
//! fails or hangs never touches a chat request.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::daemon::{Home, PROXY_KEY, free_port, stdout};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream, Fault};
use serde_json::{Value, json};

struct Setup {
    chat: FakeUpstream,
    evolver: FakeUpstream,
    home: Home,
    port: u16,
    token: String,
}

/// `timeout_secs` bounds every model call, the evolver's included.
async fn setup(every_n: u32, timeout_secs: u32) -> Setup {
    let chat = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let evolver = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: chat-model\n  request_timeout_secs: {timeout_secs}\nproxy:\n  port: {port}\n\
         skills:\n  evolver_api_base: {}\n  evolver_model: evolver-model\n  evolution_every_n_turns: {every_n}\n",
        chat.base_url_openai(),
        evolver.base_url_openai()
    ));
    // A failed evolution backs off before the next try; a short first step keeps the
    // broken-evolver test from waiting the default 30 s for its held trigger.
    let mut start = home.cmd("file", &["start", "--daemon"]);
    start.env("METACLAW_LEARNING_BACKOFF_MS", "200");
    let o = tokio::task::spawn_blocking(move || start.output().unwrap())
        .await
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let token = home.admin_token();
    Setup {
        chat,
        evolver,
        home,
        port,
        token,
    }
}

impl Setup {
    async fn chat(&self, session: &str, text: &str, done: bool) -> reqwest::Response {
        let mut req = reqwest::Client::new()
            .post(format!(
                "http://127.0.0.1:{}/v1/chat/completions",
                self.port
            ))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", session)
            .json(&json!({"model":"x","messages":[{"role":"user","content":text}]}));
        if done {
            req = req.header("x-session-done", "true");
        }
        req.send().await.unwrap()
    }

    async fn evolve(&self, session: &str) -> Value {
        let r = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/api/skills/evolve", self.port))
            .bearer_auth(&self.token)
            .json(&json!({"session_id": session}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.json().await.unwrap()
    }

    async fn log(&self) -> Value {
        reqwest::Client::new()
            .get(format!("http://127.0.0.1:{}/api/skills/log", self.port))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }
}

fn skill_json(name: &str, description: &str, body_topic: &str) -> Value {
    json!({
        "name": name,
        "description": description,
        "category": "coding",
        "tags": ["lockfile"],
        "body": format!("# {body_topic}\n\n## When this applies\nA build breaks after dependencies drift.\n\n## Steps\n1. Commit the lockfile with every dependency change.\n2. Install with the frozen lockfile in CI (`npm ci`, `cargo build --locked`).\n3. Upgrade deliberately, one dependency at a time, and run the tests.\n\n## Anti-patterns\n- Deleting the lockfile to make an install error go away.\n"),
        "improves": null
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn evolution_end_to_end_against_a_fake_evolver() {
    let s = setup(0, 60).await;
    let skills_dir = s.home.path().join("skills");

    // A valid answer: one new skill, written, loaded, logged with its provenance.
    assert_eq!(
        s.chat(
            "s-valid",
            "npm install broke the build again after a teammate upgraded packages",
            false
        )
        .await
        .status(),
        200
    );
    assert_eq!(
        s.chat(
            "s-valid",
            "how do we stop dependency drift between machines?",
            false
        )
        .await
        .status(),
        200
    );
    let valid = json!({"skills":[skill_json("pin-dependency-lockfiles",
        "Use when builds break because dependencies drifted between machines or CI.",
        "Pin dependencies with lockfiles")]});
    s.evolver.push_reply(valid.to_string());
    let out = s.evolve("s-valid").await;
    assert_eq!(out["outcome"], "added", "{out}");
    assert_eq!(out["added"], json!(["pin-dependency-lockfiles"]));
    let written =
        std::fs::read_to_string(skills_dir.join("pin-dependency-lockfiles/SKILL.md")).unwrap();
    assert!(written.contains("source: evolved"), "{written}");
    assert!(written.contains("s-valid") && written.contains("evolver-model"));

    let asked = s.evolver.requests().pop().unwrap();
    assert_eq!(asked.body["model"], "evolver-model");
    assert_eq!(asked.body["response_format"]["type"], "json_schema");
    let prompt = asked.body["messages"].to_string();
    assert!(prompt.contains("dependency drift between machines"));
    assert!(
        !prompt.contains("metaclaw-context"),
        "injected blocks are stripped"
    );

    // The new skill is served once the library reloaded (the event's generation).
    let generation = out["generation"].as_u64().unwrap();
    let status: Value = serde_json::from_str(&stdout(&s.home.run(&["status", "--json"]))).unwrap();
    assert!(status["skills"]["generation"].as_u64().unwrap() >= generation);
    assert_eq!(status["skills"]["skills_added"], 1);
    assert_eq!(
        s.chat(
            "s-next",
            "our CI build broke because dependencies drifted; should we commit the lockfile?",
            false
        )
        .await
        .status(),
        200
    );
    let sent = s.chat.requests().pop().unwrap().body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(sent.contains("### pin-dependency-lockfiles"), "{sent}");

    // Nothing new in the session: no model call at all.
    let calls = s.evolver.request_count();
    assert_eq!(s.evolve("s-valid").await["outcome"], "skipped");
    assert_eq!(s.evolver.request_count(), calls);

    // Malformed output, and again after one repair: skipped with a clear reason, nothing
    // written, the turns not offered again.
    assert_eq!(
        s.chat("s-bad", "summarise this meeting for me", false)
            .await
            .status(),
        200
    );
    s.evolver
        .push_reply("Sorry, I can't produce skills for that.");
    s.evolver.push_reply("Still no skills, sorry.");
    let calls = s.evolver.request_count();
    let out = s.evolve("s-bad").await;
    assert_eq!(s.evolver.request_count(), calls + 2, "one repair");
    assert_eq!(out["outcome"], "skipped", "{out}");
    let error = out["error"].as_str().unwrap();
    assert!(
        error.contains("not usable") && error.contains("repaired once"),
        "{out}"
    );
    let repair = s.evolver.requests().pop().unwrap().body.to_string();
    assert!(
        repair.contains("Sorry, I can't produce skills for that."),
        "{repair}"
    );
    assert_eq!(s.evolve("s-bad").await["outcome"], "skipped");
    assert_eq!(
        s.evolver.request_count(),
        calls + 2,
        "given up, not asked again"
    );

    // Duplicates, a hostile name, a built-in's name, and an improvement of an evolved skill.
    assert_eq!(
        s.chat(
            "s-mixed",
            "the lockfile conflicts again after merging main",
            false
        )
        .await
        .status(),
        200
    );
    // Named for this run, so a directory someone else left in the temp dir cannot fail it.
    let escape = format!("metaclaw-escape-{}", std::process::id());
    let mixed = json!({"skills":[
        skill_json(&format!("../../{escape}"), "Use when an attacker names a skill after a path outside the library.", "Escape"),
        skill_json("writing-tests-first", "Use when overwriting a built-in skill would be convenient.", "Overwrite"),
        skill_json("pin-dependency-lockfiles", "Use when builds break because dependencies drifted; also resolve lockfile merge conflicts.", "Pin dependencies with lockfiles, v2"),
        skill_json("pin-dependency-lockfiles", "Use when the same name comes twice in one answer.", "Twice")
    ]});
    s.evolver
        .push_reply(format!("Here you go:\n```json\n{mixed}\n```"));
    let out = s.evolve("s-mixed").await;
    assert_eq!(
        out["improved"],
        json!(["pin-dependency-lockfiles"]),
        "{out}"
    );
    assert_eq!(out["added"], json!([]));
    let rejected: Vec<String> = out["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert!(rejected.iter().any(|n| n.contains(&escape)), "{out}");
    assert!(rejected.iter().any(|n| n == "writing-tests-first"), "{out}");
    assert!(
        !s.home.path().join(&escape).exists() && !s.home.path().join("..").join(&escape).exists()
    );
    let improved =
        std::fs::read_to_string(skills_dir.join("pin-dependency-lockfiles/SKILL.md")).unwrap();
    assert!(
        improved.contains("v2") && improved.contains("improves"),
        "{improved}"
    );
    let builtin = std::fs::read_to_string(skills_dir.join("writing-tests-first/SKILL.md")).unwrap();
    assert!(
        builtin.contains("source: builtin"),
        "the built-in is untouched"
    );

    // An empty answer is a fine answer.
    assert_eq!(s.chat("s-empty", "hello!", false).await.status(), 200);
    s.evolver.push_reply(r#"{"skills":[]}"#);
    assert_eq!(s.evolve("s-empty").await["outcome"], "nothing");

    // The log keeps every event, newest first, and the CLI prints it.
    let log = s.log().await;
    let outcomes: Vec<&str> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, vec!["nothing", "added", "skipped", "added"]);
    assert_eq!(log["counts"]["failed"], 0, "given up, not failed: {log}");
    let cli = s.home.run(&["skills", "log", "--n", "10"]);
    assert!(cli.status.success(), "{cli:?}");
    let text = stdout(&cli);
    assert!(
        text.contains("pin-dependency-lockfiles")
            && text.contains("skipped")
            && text.contains("not usable"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn session_end_triggers_evolution_and_a_broken_evolver_never_touches_chat() {
    let s = setup(2, 3).await;

    // The evolver hangs: the turn-count trigger fires after the second turn, and chat goes
    // on at full speed while the evolution waits (one turn per session, so no other
    // session reaches the trigger).
    s.evolver.push_fault(Fault::Hang);
    for i in 0..2 {
        assert_eq!(
            s.chat(
                "s-hang",
                &format!("question {i} about rust lifetimes"),
                false
            )
            .await
            .status(),
            200
        );
    }
    let began = std::time::Instant::now();
    for i in 0..5 {
        let r = s
            .chat(
                &format!("s-other-{i}"),
                &format!("unrelated question {i}"),
                false,
            )
            .await;
        assert_eq!(r.status(), 200);
        assert!(r.text().await.unwrap().contains("Echo"));
    }
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "chat waited on the evolver"
    );

    // A failing evolver (500) is logged as a failed evolution, and chat is unaffected.
    s.evolver.push_fault(Fault::ServerError);
    assert_eq!(
        s.chat("s-end", "what is a good commit message?", true)
            .await
            .status(),
        200
    );
    // The session-end evolution runs after the hung one timed out; both end up in the log.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let events = loop {
        let log = s.log().await;
        let events = log["events"].as_array().unwrap().clone();
        if events.iter().any(|e| e["trigger"] == "session_end") {
            break events;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no session-end evolution: {log}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let end = events
        .iter()
        .find(|e| e["trigger"] == "session_end")
        .unwrap();
    assert_eq!(end["session_ids"], json!(["s-end"]));
    assert_eq!(end["outcome"], "failed");
    assert!(end["error"].as_str().unwrap().contains("500"), "{end}");
    let hung = events
        .iter()
        .find(|e| e["trigger"] == "every_n_turns")
        .unwrap();
    assert_eq!(
        (hung["session_ids"].clone(), hung["outcome"].clone()),
        (json!(["s-hang"]), json!("failed"))
    );
    assert_eq!(s.chat("s-after", "still there?", false).await.status(), 200);
}
