//! Memory through the real binary: the compatibility routes' shapes, the admin API for people
//! (create, edit with a version check, pin, forget, restore, purge, export → purge → import),
//! scope isolation, reads that never write, and an idle session being ingested.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use common::memory_daemon::MemoryDaemon as Daemon;

async fn start(extra: &str) -> Daemon {
    Daemon::start(extra).await
}

#[tokio::test(flavor = "multi_thread")]
async fn compatibility_routes_keep_the_reference_shapes() {
    let d = start("memory:\n  flush_every: 2\n").await;

    let (status, _) = reqwest::Client::new()
        .get(d.url("/v1/memory/stats"))
        .send()
        .await
        .map(|r| (r.status(), ()))
        .unwrap();
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "the agent key is required"
    );

    let turn = |p: &str| json!({"session_id": "plugin-1", "turn": {"prompt_text": p, "response_text": "Noted."}});
    let (s, first) = d
        .agent(
            Method::POST,
            "/v1/memory/buffer_turn",
            Some(turn("From now on, always answer in British English.")),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(first, json!({"flushed": false, "added": null}));
    let (_, second) = d
        .agent(
            Method::POST,
            "/v1/memory/buffer_turn",
            Some(turn("We use PostgreSQL 16 for the orders service.")),
        )
        .await;
    assert_eq!(second["flushed"], true, "{second}");
    assert!(second["added"].as_u64().unwrap() >= 1, "{second}");

    let (_, flushed) = d
        .agent(
            Method::POST,
            "/v1/memory/flush_session",
            Some(json!({"session_id": "plugin-1"})),
        )
        .await;
    assert!(flushed["added"].is_u64(), "{flushed}");

    let (_, hits) = d
        .agent(Method::GET, "/v1/memory/search?q=British%20English", None)
        .await;
    let hit = &hits.as_array().unwrap()[0];
    for field in [
        "memory_id",
        "type",
        "score",
        "content",
        "importance",
        "access_count",
        "matched_terms",
        "created_at",
    ] {
        assert!(hit.get(field).is_some(), "search row lacks {field}: {hit}");
    }
    assert!(hit["content"].as_str().unwrap().contains("British English"));

    let (_, stats) = d.agent(Method::GET, "/v1/memory/stats", None).await;
    for field in [
        "total",
        "active",
        "active_by_type",
        "memory_density",
        "dominant_type",
        "type_count",
        "type_ratios",
        "superseded",
    ] {
        assert!(stats.get(field).is_some(), "stats lacks {field}: {stats}");
    }
    assert!(stats["active"].as_u64().unwrap() >= 1);

    let id = hit["memory_id"].as_str().unwrap();
    let (s, unit) = d
        .agent(Method::GET, &format!("/v1/memory/{id}"), None)
        .await;
    assert_eq!(s, 200);
    for field in [
        "memory_id",
        "scope_id",
        "type",
        "content",
        "summary",
        "importance",
        "entities",
        "topics",
        "tags",
        "pinned",
        "created_at",
        "updated_at",
        "expires_at",
    ] {
        assert!(unit.get(field).is_some(), "unit lacks {field}: {unit}");
    }
    let (s, _) = d
        .agent(Method::GET, "/v1/memory/does-not-exist", None)
        .await;
    assert_eq!(s, 404);

    let (_, ingest) = d
        .agent(
            Method::POST,
            "/v1/memory/ingest",
            Some(json!({"session_id": "plugin-1"})),
        )
        .await;
    assert_eq!(ingest["added"], 0, "nothing new since the flush: {ingest}");
    assert!(ingest["sessions"].is_array());

    // An explicit scope decides where the memories go: `scope_id` of flush_session and
    // `scope` of ingest, over the scope the turns were recorded in. Each session states a
    // rule, so it teaches something (a session that taught nothing leaves no digest).
    let in_scope = async |scope: &str, text: &str| -> bool {
        let (_, units) = d
            .admin(Method::GET, &format!("/api/memory?scope={scope}"), None)
            .await;
        units.to_string().contains(text)
    };
    for (session, text, route, body) in [
        (
            "plugin-2",
            "From now on, deploy staging to the Frankfurt cluster.",
            "/v1/memory/flush_session",
            json!({"session_id": "plugin-2", "scope_id": "team-ops"}),
        ),
        (
            "plugin-3",
            "From now on, write the billing service in Go.",
            "/v1/memory/ingest",
            json!({"session_id": "plugin-3", "scope": "team-billing"}),
        ),
    ] {
        let (s, _) = d
            .agent(
                Method::POST,
                "/v1/memory/buffer_turn",
                Some(json!({"session_id": session, "turn": {"prompt_text": text, "response_text": "Noted."}})),
            )
            .await;
        assert_eq!(s, 200);
        let (s, out) = d.agent(Method::POST, route, Some(body.clone())).await;
        assert_eq!(s, 200, "{out}");
        assert!(out["added"].as_u64().unwrap() >= 1, "{route}: {out}");
        let scope = body["scope_id"]
            .as_str()
            .or(body["scope"].as_str())
            .unwrap();
        let fact = text.trim_end_matches('.');
        assert!(in_scope(scope, fact).await, "{route}: not in {scope}");
        assert!(!in_scope("default", fact).await, "{route}: also in default");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_off_answers_503() {
    let d = start("memory:\n  enabled: false\n").await;
    let (s, body) = d.agent(Method::GET, "/v1/memory/stats", None).await;
    assert_eq!(s, 503);
    assert!(body.to_string().contains("memory not enabled"));
}

#[tokio::test(flavor = "multi_thread")]
async fn people_can_browse_edit_pin_forget_and_move_their_memories() {
    let d = start("").await;
    let (s, unit) = d
        .admin(
            Method::POST,
            "/api/memory",
            Some(json!({"kind": "preference", "content": "Prefers concise answers with code first.", "tags": ["Style"]})),
        )
        .await;
    assert_eq!(s, 200, "{unit}");
    let id = unit["id"].as_str().unwrap().to_string();
    assert_eq!(unit["source"], "manual");
    assert_eq!(unit["tags"], json!(["style"]));

    let (_, page) = d
        .admin(Method::GET, "/api/memory?kind=preference", None)
        .await;
    assert_eq!(page["total"], 1);
    let (s, _) = d
        .admin(Method::GET, "/api/memory?kind=nonsense", None)
        .await;
    assert_eq!(s, 400);

    let (s, edited) = d
        .admin(
            Method::PATCH,
            &format!("/api/memory/{id}"),
            Some(json!({"content": "Prefers concise answers, code first, no preamble.", "expected_version": 1})),
        )
        .await;
    assert_eq!(s, 200, "{edited}");
    assert_eq!(edited["version"], 2);
    let (s, _) = d
        .admin(
            Method::PATCH,
            &format!("/api/memory/{id}"),
            Some(json!({"content": "stale editor", "expected_version": 1})),
        )
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "a stale edit never overwrites");

    let (_, pinned) = d
        .admin(Method::POST, &format!("/api/memory/{id}/pin"), None)
        .await;
    assert_eq!(pinned["pinned"], true);
    let (_, hits) = d
        .admin(Method::GET, "/api/memory/search?q=concise%20code", None)
        .await;
    let hit = &hits.as_array().unwrap()[0];
    assert!(hit["reason"].as_str().unwrap().contains("concise"), "{hit}");
    assert!(hit["components"].is_object());

    let (_, shown) = d
        .admin(Method::GET, &format!("/api/memory/{id}"), None)
        .await;
    assert_eq!(shown["history"].as_array().unwrap().len(), 3, "{shown}");
    assert!(shown["events"].as_array().unwrap().len() >= 3);

    let (_, forgotten) = d
        .admin(Method::POST, &format!("/api/memory/{id}/forget"), None)
        .await;
    assert_eq!(forgotten["status"], "archived");
    let (_, page) = d.admin(Method::GET, "/api/memory", None).await;
    assert_eq!(
        page["total"], 0,
        "forgotten units leave the default listing"
    );
    let (_, restored) = d
        .admin(Method::POST, &format!("/api/memory/{id}/restore"), None)
        .await;
    assert_eq!(restored["status"], "active");

    // Export → purge → import gives the same unit back.
    let export = reqwest::Client::new()
        .get(d.url("/api/memory/export"))
        .bearer_auth(&d.token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(export.lines().count(), 1);
    let (s, _) = d
        .admin(Method::DELETE, &format!("/api/memory/{id}"), None)
        .await;
    assert_eq!(s, 200);
    let (s, _) = d
        .admin(Method::GET, &format!("/api/memory/{id}"), None)
        .await;
    assert_eq!(s, 404);
    let report: Value = reqwest::Client::new()
        .post(d.url("/api/memory/import"))
        .bearer_auth(&d.token)
        .body(export.clone())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(report["imported"], 1, "{report}");
    let (_, back) = d
        .admin(Method::GET, &format!("/api/memory/{id}"), None)
        .await;
    let before: Value = serde_json::from_str(export.trim()).unwrap();
    assert_eq!(back["unit"], before);

    let o = d.home.run(&["status"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("memory:     1 remembered (1 pinned)"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn scopes_are_isolated_reads_never_write_and_idle_sessions_are_ingested() {
    // Sessions end after three seconds of silence.
    let d = start("session:\n  idle_timeout_minutes: 0.05\n").await;
    d.chat(
        "a-1",
        "team-a",
        "From now on, always deploy on Tuesdays only.",
        false,
    )
    .await;

    // The idle sweeper ends the session; extraction follows. Bounded poll on the outcome.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (_, hits) = d
            .agent(
                Method::GET,
                "/v1/memory/search?q=deploy%20Tuesdays&scope=team-a",
                None,
            )
            .await;
        if !hits.as_array().unwrap().is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the idle session was never ingested"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Reads (injection and search) leave the database file untouched.
    d.admin(Method::POST, "/api/recorder/flush", None).await;
    let (_, before_stats) = d
        .agent(Method::GET, "/v1/memory/stats?scope=team-a", None)
        .await;
    let before = d.db_bytes();
    for _ in 0..3 {
        d.agent(Method::GET, "/v1/memory/search?q=deploy&scope=team-a", None)
            .await;
    }
    assert_eq!(d.db_bytes(), before, "search wrote to the database");
    let (_, after_stats) = d
        .agent(Method::GET, "/v1/memory/stats?scope=team-a", None)
        .await;
    assert_eq!(before_stats, after_stats);

    let same_scope = d
        .chat("a-2", "team-a", "When should we deploy the release?", false)
        .await;
    assert!(
        same_scope.to_string().contains("deploy on Tuesdays only"),
        "{same_scope}"
    );
    let other_scope = d
        .chat("b-1", "team-b", "When should we deploy the release?", false)
        .await;
    assert!(
        !other_scope.to_string().contains("Tuesdays"),
        "another scope never sees team-a's memories: {other_scope}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_profile_lists_standing_rules_which_people_can_demote_or_forget() {
    let d = start("").await;
    let mut ids = Vec::new();
    for (kind, content) in [
        ("preference", "Always answer in British English."),
        (
            "procedural_observation",
            "Run the linter before every commit.",
        ),
        ("semantic", "The billing service is written in Go."),
    ] {
        let (s, unit) = d
            .admin(
                Method::POST,
                "/api/memory",
                Some(json!({"kind": kind, "content": content})),
            )
            .await;
        assert_eq!(s, 200, "{unit}");
        ids.push((
            unit["id"].as_str().unwrap().to_string(),
            unit["version"].clone(),
        ));
    }
    let contents = |p: &Value| -> Vec<String> {
        p["units"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["content"].as_str().unwrap().to_string())
            .collect()
    };

    // On by default and whole (two short rules fit 300 tokens); a fact is not a rule.
    let (s, p) = d.admin(Method::GET, "/api/memory/profile", None).await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(
        (
            p["on"].clone(),
            p["whole"].clone(),
            p["profile_tokens"].clone()
        ),
        (json!(true), json!(true), json!(300)),
        "{p}"
    );
    assert_eq!(
        contents(&p),
        [
            "Always answer in British English.",
            "Run the linter before every commit."
        ]
    );

    // Off for this scope: the rules are still listed, found by relevance only.
    let (s, _) = d
        .admin(
            Method::PUT,
            "/api/memory/policy",
            Some(json!({"profile_tokens": 0})),
        )
        .await;
    assert_eq!(s, 200);
    let (_, p) = d.admin(Method::GET, "/api/memory/profile", None).await;
    assert_eq!(p["on"], false, "{p}");
    assert_eq!(contents(&p).len(), 2, "{p}");

    // Demoted: a fact, out of the profile; forgotten: gone.
    let (id, version) = &ids[0];
    let (s, u) = d
        .admin(
            Method::PATCH,
            &format!("/api/memory/{id}"),
            Some(json!({"kind": "semantic", "expected_version": version})),
        )
        .await;
    assert_eq!(s, 200, "{u}");
    assert_eq!(u["kind"], "semantic");
    let (s, _) = d
        .admin(
            Method::POST,
            &format!("/api/memory/{}/forget", ids[1].0),
            None,
        )
        .await;
    assert_eq!(s, 200);
    let (_, p) = d.admin(Method::GET, "/api/memory/profile", None).await;
    assert!(contents(&p).is_empty(), "{p}");

    let (s, p) = d
        .admin(Method::GET, "/api/memory/profile?scope=elsewhere", None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(p["scope"], "elsewhere");
    assert_eq!(p["on"], true, "a scope's own policy: {p}");
}
