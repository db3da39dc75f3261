//! Semantic skill retrieval through the real binary, with a fake upstream serving chat and
//! `/v1/embeddings`: a relevant skill injected in `hybrid` mode, skill vectors cached in
//! SQLite across a restart, a failing or hanging embeddings API costing a turn no more than
//! the timeout (and leaving it lexical), and a high `min_similarity` injecting nothing.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::{Duration, Instant};

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream, Fault};
use serde_json::{Value, json};

const QUESTION: &str = "My pytest suite fails with an ImportError after I renamed a module. How do I debug this failing test?";
const TESTING_SKILLS: [&str; 2] = ["### writing-tests-first", "### flaky-test-triage"];
/// Built-in skills (71) over batches of at most 64 inputs.
const INDEX_REQUESTS: u64 = 2;

struct Daemon {
    home: Home,
    port: u16,
    token: String,
}

/// A home whose chat goes to `chat` and, with `embeddings`, whose vectors come from there
/// (else they inherit the openai `llm.api_base`). Evolution is off so the library, and
/// therefore the embedding requests, stay predictable.
fn home(chat: &FakeUpstream, embeddings: Option<&str>, skills: &str) -> (Home, u16) {
    let port = free_port();
    let embedding_base = embeddings
        .map(|b| format!("  embedding_api_base: {b}\n"))
        .unwrap_or_default();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n\
         memory:\n  retrieval_mode: keyword\n\
         skills:\n  auto_evolve: false\n  embedding_source: api\n  embedding_model: fake-embed\n{embedding_base}{skills}",
        chat.base_url_openai()
    ));
    (home, port)
}

async fn start(home: Home, port: u16) -> Daemon {
    let token = start_again(&home).await;
    Daemon { home, port, token }
}

async fn start_again(home: &Home) -> String {
    home.start_daemon().await;
    home.admin_token()
}

impl Daemon {
    async fn chat(&self, text: &str) -> Duration {
        let started = Instant::now();
        let r = reqwest::Client::new()
            .post(format!(
                "http://127.0.0.1:{}/v1/chat/completions",
                self.port
            ))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", "conv-emb")
            .json(&json!({"model":"x","messages":[{"role":"user","content":text}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
        started.elapsed()
    }

    async fn search(&self, q: &str) -> Value {
        let url = reqwest::Url::parse_with_params(
            &format!("http://127.0.0.1:{}/api/skills/search", self.port),
            &[("q", q)],
        )
        .unwrap();
        let r = reqwest::Client::new()
            .get(url)
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.json().await.unwrap()
    }

    /// Until the semantic index is attached. Bounded poll: it is built in the background and
    /// the daemon offers nothing else to wait on. Embeds `q` once (then it is cached).
    async fn wait_semantic(&self, q: &str) -> Value {
        self.wait_semantic_after(q, 0).await
    }

    /// [`Self::wait_semantic`] for a library newer than generation `after`.
    async fn wait_semantic_after(&self, q: &str, after: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let found = self.search(q).await;
            if found["semantic"] == true && found["generation"].as_u64().unwrap() > after {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "the semantic index never loaded: {found}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The newest chat request's user text, as the upstream received it.
fn sent(fake: &FakeUpstream) -> String {
    let req = fake
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.path.starts_with("/v1/chat/completions"))
        .unwrap();
    req.body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string()
}

fn has_testing_skill(text: &str) -> bool {
    TESTING_SKILLS.iter().any(|s| text.contains(s))
}

#[tokio::test(flavor = "multi_thread")]
async fn hybrid_injects_a_relevant_skill_and_caches_skill_vectors_across_a_restart() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let (home, port) = home(&fake, None, "  retrieval_mode: hybrid\n");
    let d = start(home, port).await;

    let found = d.wait_semantic(QUESTION).await;
    assert_eq!(found["mode"], "hybrid");
    assert_eq!(found["semantic_index_skills"], 71, "{found}");
    let ranked = found["ranked"].as_array().unwrap();
    assert!(ranked.iter().all(|h| h["cosine"].is_number()), "{found}");
    let first_start = fake.embedding_requests();
    assert_eq!(
        first_start,
        INDEX_REQUESTS + 1,
        "every skill once, in batches, plus the query"
    );

    d.chat(QUESTION).await;
    let text = sent(&fake);
    assert!(text.contains("<metaclaw-context>\n## Skills"), "{text}");
    assert!(has_testing_skill(&text), "{text}");
    assert!(!text.contains("### account-security-basics"), "{text}");
    assert_eq!(
        fake.embedding_requests(),
        first_start,
        "a repeated query is not embedded again"
    );

    assert!(d.home.run(&["stop"]).status.success());
    let d = Daemon {
        token: start_again(&d.home).await,
        ..d
    };
    d.wait_semantic(QUESTION).await;
    assert_eq!(
        fake.embedding_requests() - first_start,
        1,
        "after a restart the skill vectors come from SQLite; only the query is embedded"
    );
    d.chat(QUESTION).await;
    assert!(has_testing_skill(&sent(&fake)));

    // An edited skill is re-embedded, alone; the query's vector is still cached.
    let before = fake.embedding_requests();
    let generation = d.search(QUESTION).await["generation"].as_u64().unwrap();
    let file = d.home.path().join("skills/writing-tests-first/SKILL.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}\nRun the one failing test first.\n")).unwrap();
    d.wait_semantic_after(QUESTION, generation).await;
    assert_eq!(fake.embedding_requests() - before, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_or_hanging_embeddings_api_leaves_turns_lexical_and_prompt() {
    let chat = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let embeddings = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let timeout = Duration::from_millis(300);
    let (home, port) = home(
        &chat,
        Some(&embeddings.base_url_openai()),
        &format!(
            "  retrieval_mode: hybrid\n  embedding_timeout_ms: {}\n",
            timeout.as_millis()
        ),
    );
    let d = start(home, port).await;
    d.wait_semantic("warm-up query").await;

    // A query not seen before must be embedded; the API never answers.
    embeddings.push_fault(Fault::Hang);
    let took = d.chat(&format!("{QUESTION} (hang)")).await;
    let text = sent(&chat);
    assert!(has_testing_skill(&text), "lexical skills still: {text}");
    // The API never answers, and the call's own timeout is 60 s: a turn back within a few
    // seconds (margin for a loaded machine) was bounded by the per-turn timeout.
    assert!(
        took < timeout + Duration::from_secs(5),
        "the turn waited {took:?}, more than the {timeout:?} timeout allows"
    );

    embeddings.push_fault(Fault::ServerError);
    d.chat(&format!("{QUESTION} (500)")).await;
    assert!(has_testing_skill(&sent(&chat)));

    // Recovered: the next new query is semantic again.
    let found = d.search(&format!("{QUESTION} (ok)")).await;
    assert_eq!(found["semantic"], true, "{found}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_embeddings_api_serves_lexical_skills() {
    let chat = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    // Nothing listens there: every index build fails to connect.
    let dead = format!("http://127.0.0.1:{}/v1", free_port());
    let (home, port) = home(&chat, Some(&dead), "  retrieval_mode: embedding\n");
    let d = start(home, port).await;

    d.chat(QUESTION).await;
    assert!(has_testing_skill(&sent(&chat)));
    let found = d.search(QUESTION).await;
    assert_eq!(found["mode"], "embedding");
    assert_eq!(found["semantic"], false, "{found}");
    assert!(found["semantic_index_skills"].is_null(), "{found}");
}

#[tokio::test(flavor = "multi_thread")]
async fn embedding_mode_with_a_high_floor_injects_nothing_for_an_unrelated_query() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let (home, port) = home(
        &fake,
        None,
        "  retrieval_mode: embedding\n  min_similarity: 0.9\n",
    );
    let d = start(home, port).await;
    let haiku = "Write a haiku about autumn leaves falling on a quiet pond.";
    let found = d.wait_semantic(haiku).await;
    assert_eq!(found["injected"], json!([]), "{found}");
    let best = found["ranked"][0]["cosine"].as_f64().unwrap();
    assert!(best < 0.9, "{found}");

    d.chat(haiku).await;
    let text = sent(&fake);
    assert!(!text.contains("<metaclaw-context>"), "{text}");
}
