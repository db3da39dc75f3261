//! Memory behaviours only reachable through the public surface: extraction every
//! `memory.flush_every` proxied main turns, access statistics counted by the background
//! worker (and never by a search), the admin stats/pin/unpin routes and cursor pagination,
//! and the CLI's pin, unpin and soft forget.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use common::daemon::{Home, stdout};
use common::memory_daemon::MemoryDaemon as Daemon;

/// Polls `check` every 100 ms until it holds or 30 s pass.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check().await {
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn create(d: &Daemon, body: Value) -> String {
    let (s, unit) = d.admin(Method::POST, "/api/memory", Some(body)).await;
    assert_eq!(s, 200, "{unit}");
    unit["id"].as_str().unwrap().to_string()
}

async fn unit(d: &Daemon, id: &str) -> Value {
    let (s, shown) = d
        .admin(Method::GET, &format!("/api/memory/{id}"), None)
        .await;
    assert_eq!(s, 200, "{shown}");
    shown["unit"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_flush_every_main_turns_of_an_open_session_are_extracted() {
    let extractor = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    // Sessions stay open for ten hours: only the turn count can trigger extraction.
    let d = Daemon::start(&format!(
        "memory:\n  flush_every: 2\n  extractor_api_base: {}\n  extractor_model: extractor\nsession:\n  idle_timeout_minutes: 600\n",
        extractor.base_url_openai()
    ))
    .await;
    extractor.push_reply(
        json!({"memories": [{"kind": "project_state", "content": "The billing service is written in Elixir.",
                              "fact_key": "project:billing-language", "importance": 0.8, "confidence": 0.9,
                              "tags": [], "source_turn": null}]})
        .to_string(),
    );

    d.chat(
        "open-1",
        "team",
        "The billing service is written in Elixir.",
        false,
    )
    .await;
    d.admin(Method::POST, "/api/recorder/flush", None).await;
    assert_eq!(
        extractor.request_count(),
        0,
        "one turn is below flush_every: nothing is extracted yet"
    );
    d.chat("open-1", "team", "Its tests run with ExUnit in CI.", false)
        .await;

    eventually("the extraction model is asked", || async {
        extractor.request_count() >= 1
    })
    .await;
    let asked = extractor.requests().pop().unwrap().body.to_string();
    assert!(
        asked.contains("written in Elixir") && asked.contains("ExUnit"),
        "both turns go to the extractor: {asked}"
    );
    eventually("the extracted unit is listed", || async {
        let (_, page) = d.admin(Method::GET, "/api/memory?scope=team", None).await;
        page["units"].as_array().is_some_and(|u| {
            u.iter()
                .any(|u| u["content"] == "The billing service is written in Elixir.")
        })
    })
    .await;
    let (_, summaries) = d
        .admin(
            Method::GET,
            "/api/memory?scope=team&kind=working_summary",
            None,
        )
        .await;
    assert_eq!(
        summaries["total"], 0,
        "the session is still open, so no summary: {summaries}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn injected_units_are_counted_as_accessed_and_searches_are_not() {
    let d = Daemon::start("").await;
    let content = "The orders service runs PostgreSQL 16 on host db-seven.";
    let id = create(
        &d,
        json!({"scope": "ops", "kind": "project_state", "content": content}),
    )
    .await;
    assert_eq!(unit(&d, &id).await["access_count"], 0);

    let search_twice = || async {
        let (s, hits) = d
            .admin(
                Method::GET,
                "/api/memory/search?q=PostgreSQL&scope=ops",
                None,
            )
            .await;
        assert_eq!(s, 200);
        assert!(hits.to_string().contains(&id), "{hits}");
        let (_, hits) = d
            .agent(
                Method::GET,
                "/v1/memory/search?q=PostgreSQL&scope=ops",
                None,
            )
            .await;
        assert!(hits.to_string().contains(&id), "{hits}");
    };
    search_twice().await;
    assert_eq!(
        unit(&d, &id).await["access_count"],
        0,
        "a search is a read: nothing is counted"
    );

    let forwarded = d
        .chat(
            "ask-1",
            "ops",
            "Which PostgreSQL version does the orders service run?",
            false,
        )
        .await;
    assert!(
        forwarded.to_string().contains(content),
        "the unit is injected: {forwarded}"
    );
    eventually("the worker records the access", || async {
        unit(&d, &id).await["access_count"].as_u64() >= Some(1)
    })
    .await;
    let counted = unit(&d, &id).await;
    assert!(counted["last_accessed_ms"].is_i64(), "{counted}");

    search_twice().await;
    assert_eq!(
        unit(&d, &id).await["access_count"],
        counted["access_count"],
        "searching after the access still counts nothing"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stats_pin_unpin_and_cursor_pages_through_the_admin_api() {
    let d = Daemon::start("").await;
    for (kind, text) in [
        ("preference", "Prefers answers in British English."),
        ("preference", "Prefers tabs over spaces."),
        ("semantic", "The staging cluster lives in Frankfurt."),
    ] {
        create(&d, json!({"scope": "alpha", "kind": kind, "content": text})).await;
    }
    let mut beta = Vec::new();
    for i in 0..7 {
        beta.push(
            create(
                &d,
                json!({"scope": "beta", "kind": "semantic", "content": format!("Beta fact number {i} about the rollout.")}),
            )
            .await,
        );
    }

    let (s, alpha) = d
        .admin(Method::GET, "/api/memory/stats?scope=alpha", None)
        .await;
    assert_eq!(s, 200, "{alpha}");
    assert_eq!(
        (alpha["total"].as_u64(), alpha["active"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(alpha["by_kind"], json!({"preference": 2, "semantic": 1}));
    assert_eq!(alpha["pinned"], 0);
    let (_, all) = d.admin(Method::GET, "/api/memory/stats", None).await;
    assert_eq!(all["total"], 10, "{all}");
    assert_eq!(all["scopes"], json!([["alpha", 3], ["beta", 7]]), "{all}");

    let id = &beta[0];
    let (s, pinned) = d
        .admin(Method::POST, &format!("/api/memory/{id}/pin"), None)
        .await;
    assert_eq!(s, 200, "{pinned}");
    assert_eq!(pinned["pinned"], true);
    assert_eq!(unit(&d, id).await["pinned"], true);
    let (_, beta_stats) = d
        .admin(Method::GET, "/api/memory/stats?scope=beta", None)
        .await;
    assert_eq!(beta_stats["pinned"], 1, "{beta_stats}");
    let (s, unpinned) = d
        .admin(Method::POST, &format!("/api/memory/{id}/unpin"), None)
        .await;
    assert_eq!(s, 200, "{unpinned}");
    assert_eq!(unpinned["pinned"], false);
    assert_eq!(unit(&d, id).await["pinned"], false);

    // Three per page over seven units: 3 + 3 + 1, each unit exactly once.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/memory?scope=beta&limit=3&cursor={c}"),
            None => "/api/memory?scope=beta&limit=3".to_string(),
        };
        let (s, page) = d.admin(Method::GET, &path, None).await;
        assert_eq!(s, 200, "{page}");
        assert_eq!(page["total"], 7);
        pages += 1;
        assert!(pages <= 3, "more pages than 7 units need: {page}");
        for u in page["units"].as_array().unwrap() {
            seen.push(u["id"].as_str().unwrap().to_string());
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 7, "{seen:?}");
    assert_eq!(
        seen.iter().cloned().collect::<HashSet<_>>(),
        beta.iter().cloned().collect::<HashSet<_>>()
    );
}

fn listed(home: &Home, args: &[&str]) -> Vec<Value> {
    let o = home.run(args);
    assert!(o.status.success(), "{o:?}");
    let page: Value = serde_json::from_str(&stdout(&o)).unwrap();
    page["units"].as_array().unwrap().clone()
}

#[test]
fn cli_pins_unpins_and_softly_forgets() {
    let home = Home::new("");
    let o = home.run(&[
        "memory",
        "add",
        "Release notes are written in Markdown.",
        "--kind",
        "semantic",
    ]);
    assert!(o.status.success(), "{o:?}");
    let id = stdout(&o)
        .trim()
        .trim_start_matches("remembered ")
        .to_string();

    let o = home.run(&["memory", "pin", &id]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        listed(&home, &["memory", "list", "--json"])[0]["pinned"],
        true
    );
    let o = home.run(&["memory", "unpin", &id]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        listed(&home, &["memory", "list", "--json"])[0]["pinned"],
        false
    );

    let o = home.run(&["memory", "forget", &id]);
    assert!(o.status.success(), "{o:?}");
    assert!(
        listed(&home, &["memory", "list", "--json"]).is_empty(),
        "a forgotten unit leaves the default listing"
    );
    let all = listed(&home, &["memory", "list", "--json", "--all"]);
    assert_eq!(all.len(), 1);
    assert_eq!(
        (all[0]["id"].as_str(), all[0]["status"].as_str()),
        (Some(id.as_str()), Some("archived"))
    );
    let o = home.run(&["memory", "show", &id]);
    assert!(o.status.success(), "{o:?}");
    let shown: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(shown["unit"]["status"], "archived");
    assert_eq!(
        shown["unit"]["content"],
        "Release notes are written in Markdown."
    );
    assert_eq!(
        home.run(&["memory", "pin", "no-such-unit"]).status.code(),
        Some(1)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_changes_go_through_the_running_engine() {
    let d = Daemon::start("").await;
    let o = d.home.run(&[
        "memory",
        "add",
        "Deploys happen on Tuesdays.",
        "--kind",
        "project_state",
    ]);
    assert!(o.status.success(), "{o:?}");
    let id = stdout(&o)
        .trim()
        .trim_start_matches("remembered ")
        .to_string();
    let o = d
        .home
        .run(&["memory", "edit", &id, "Deploys happen on Wednesdays."]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o).trim(), format!("{id} is now version 2"));
    let o = d.home.run(&["memory", "pin", &id]);
    assert!(o.status.success(), "{o:?}");

    // The engine's own service wrote them: audited as the dashboard's changes are.
    let (s, shown) = d
        .admin(Method::GET, &format!("/api/memory/{id}"), None)
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(shown["unit"]["content"], "Deploys happen on Wednesdays.");
    assert_eq!(shown["unit"]["pinned"], true);
    let actors: Vec<&str> = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["actor"].as_str().unwrap())
        .collect();
    assert!(
        !actors.is_empty() && actors.iter().all(|a| *a == "user"),
        "{shown}"
    );

    // A kind the CLI does not know is refused before anything is sent, as when stopped.
    let o = d.home.run(&["memory", "add", "x", "--kind", "mood"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    // A change the engine refuses is the CLI's error, with the engine's reason.
    let o = d.home.run(&["memory", "pin", "no-such-unit"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("404"), "{o:?}");

    let o = d.home.run(&["memory", "forget", &id, "--purge"]);
    assert!(o.status.success(), "{o:?}");
    let (s, _) = d
        .admin(Method::GET, &format!("/api/memory/{id}"), None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}
