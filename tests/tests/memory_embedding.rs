//! Memory found by meaning through the real binary with a provider's embeddings API
//! (`memory.retrieval_mode: hybrid`, `skills.embedding_source: api`, vectors from the fake's
//! `/v1/embeddings`, where "puppy" embeds as "dog"): a unit sharing no word with the question
//! is explained as "similar in meaning" and injected into the agent's prompt; keyword mode
//! does not find it; a failing embeddings API leaves the turn served. (The local model:
//! `embeddings_local.rs`.)

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::memory_daemon::MemoryDaemon as Daemon;
use metaclaw_e2e::fake_upstream::Fault;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const FACT: &str = "Biscuit is the family dog";
const QUESTION: &str = "what is the puppy called?";

async fn remember(d: &Daemon) {
    for content in [FACT, "Deploys run on Fridays after lunch"] {
        let (s, v) = d
            .admin(
                Method::POST,
                "/api/memory",
                Some(json!({"kind": "semantic", "content": content})),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
    }
}

async fn search(d: &Daemon, q: &str) -> Vec<Value> {
    let (s, v) = d
        .admin(
            Method::GET,
            &format!(
                "/api/memory/search?q={}",
                q.replace(' ', "+").replace('?', "%3F")
            ),
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v.as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_memory_sharing_no_word_with_the_question_is_found_by_meaning() {
    let d = Daemon::start_with(
        "  embedding_source: api\n",
        "memory:\n  retrieval_mode: hybrid\n",
    )
    .await;
    remember(&d).await;
    // Adding a unit queues its embedding; search by meaning works once the index is in.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let hits = loop {
        let hits = search(&d, QUESTION).await;
        if !hits.is_empty() {
            break hits;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never found by meaning"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // A search ranks what is near in meaning; the fact comes first.
    assert_eq!(hits[0]["unit"]["content"], FACT, "{hits:?}");
    let reason = hits[0]["reason"].as_str().unwrap();
    assert!(reason.contains("similar in meaning (cosine"), "{reason}");
    assert!(hits[0]["components"]["semantic"].as_f64().unwrap() > 0.0);
    assert_eq!(hits[0]["components"]["lexical"], 0.0);

    // The prompt takes only what is close enough (`min_similarity`).
    let body = d.chat("s1", "default", QUESTION, false).await;
    assert!(body.to_string().contains("Biscuit"), "{body}");
    assert!(!body.to_string().contains("Deploys"), "{body}");
    assert!(
        d.fake.embedding_requests() >= 2,
        "units and the question embedded"
    );

    // The embeddings API fails for the next question: served anyway, found by words only.
    d.fake.push_fault(Fault::ServerError);
    let body = d
        .chat(
            "s2",
            "default",
            "and what is the puppy called today?",
            false,
        )
        .await;
    assert!(!body.to_string().contains("Biscuit"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn keyword_mode_finds_memories_by_their_words_only() {
    let d = Daemon::start_with(
        "  embedding_source: api\n",
        "memory:\n  retrieval_mode: keyword\n",
    )
    .await;
    remember(&d).await;
    assert!(search(&d, QUESTION).await.is_empty());
    let body = d.chat("s1", "default", QUESTION, false).await;
    assert!(!body.to_string().contains("Biscuit"), "{body}");
    assert_eq!(d.fake.embedding_requests(), 0);
    assert_eq!(search(&d, "family dog").await.len(), 1);
}
