//! Retention through the binary: turns older than `storage.keep_turn_bodies_days` lose their
//! messages when retention runs, their figures and everything learned stay, and the file
//! gives the space back. The clock retention measures age against is moved forward with
//! `METACLAW_RETENTION_CLOCK_OFFSET_DAYS` on a second start, as if a hundred days had passed.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::memory_daemon::MemoryDaemon;
use reqwest::Method;
use serde_json::{Value, json};

const TURNS: usize = 24;

/// Text that does not compress: each turn's own numbers.
fn words(seed: u64, n: u64) -> String {
    (0..n)
        .map(|k| format!("{:x}", (seed * 7919 + k) * 2_654_435_761 % 1_000_003))
        .collect::<Vec<_>>()
        .join(" ")
}

fn json_of(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{o:?}");
    serde_json::from_slice(&o.stdout).unwrap()
}

async fn file_bytes(d: &MemoryDaemon) -> u64 {
    let size = |name: &str| std::fs::metadata(d.home.path().join(name)).map_or(0, |m| m.len());
    size("metaclaw.db") + size("metaclaw.db-wal")
}

#[tokio::test(flavor = "multi_thread")]
async fn old_messages_go_figures_and_learned_items_stay_and_the_file_shrinks() {
    let d = MemoryDaemon::start("memory:\n  auto_extract: false\n").await;
    for i in 0..TURNS {
        let session = format!("s{}", i % 3);
        d.chat(&session, "default", &words(i as u64, 3000), false)
            .await;
    }
    let (s, unit) = d
        .admin(
            Method::POST,
            "/api/memory",
            Some(json!({"kind": "preference", "content": "Prefers metric units in every answer."})),
        )
        .await;
    assert_eq!(s, 200, "{unit}");

    // Nothing is old yet: retention keeps every message.
    let run = json_of(&d.home.run(&["storage", "prune", "--json"]));
    assert_eq!(run["by_age"]["turns"], 0, "{run}");
    assert_eq!(run["trigger"], "asked");
    let report = json_of(&d.home.run(&["storage", "--json"]));
    assert_eq!(report["bodies"]["with_bodies"], TURNS, "{report}");
    assert_eq!(report["retention"]["keep_turn_bodies_days"], 90);
    assert_eq!(
        report["space"]["parts"][0]["what"], "conversations",
        "{report}"
    );
    let text = String::from_utf8(d.home.run(&["storage"]).stdout).unwrap();
    assert!(
        text.contains("messages kept 90 days, no size limit"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{TURNS} turns, {TURNS} with their messages")),
        "{text}"
    );
    let (_, stats) = d.admin(Method::GET, "/api/stats?hours=24", None).await;
    assert_eq!(stats["turns"], TURNS, "{stats}");

    // A hundred days later.
    assert!(d.home.run(&["stop"]).status.success());
    let before = file_bytes(&d).await;
    let mut start = d.home.cmd("file", &["start", "--daemon"]);
    start.env("METACLAW_RETENTION_CLOCK_OFFSET_DAYS", "100");
    let o = tokio::task::spawn_blocking(move || start.output().unwrap())
        .await
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let d = MemoryDaemon {
        token: d.home.admin_token(),
        ..d
    };
    let run = json_of(&d.home.run(&["storage", "prune", "--json"]));
    assert_eq!(run["by_age"]["turns"], TURNS, "{run}");
    assert_eq!(run["finished"], true, "{run}");
    assert!(run["error"].is_null(), "{run}");
    assert!(run["given_back_bytes"].as_u64().unwrap() > 0, "{run}");
    let after = file_bytes(&d).await;
    assert!(after < before / 2, "{after} of {before}");

    // The turns and their figures stay; their messages are gone; what was learned stays.
    let status = json_of(&d.home.run(&["status", "--json"]));
    assert_eq!(status["turns_recorded"], TURNS, "{status}");
    assert_eq!(status["storage"]["last_run"]["by_age"]["turns"], TURNS);
    assert_eq!(status["memory"]["active"], 1, "{status}");
    let (_, stats) = d.admin(Method::GET, "/api/stats?hours=24", None).await;
    assert_eq!(stats["turns"], TURNS, "{stats}");
    assert!(stats["input_tokens"].as_u64().unwrap() > 0, "{stats}");
    let (_, turns) = d.admin(Method::GET, "/api/turns?session=s0", None).await;
    let turns = turns["turns"].as_array().unwrap();
    assert_eq!(turns.len(), TURNS / 3);
    assert!(
        turns
            .iter()
            .all(|t| t["request_json"] == "{}" && t["reply_json"].is_null())
    );
    let (_, unit) = d
        .admin(
            Method::GET,
            &format!("/api/memory/{}", unit["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(
        unit["unit"]["content"], "Prefers metric units in every answer.",
        "{unit}"
    );

    // A new turn keeps its messages.
    d.chat("s9", "default", "what is new today?", false).await;
    d.admin(Method::POST, "/api/recorder/flush", None).await;
    let report = json_of(&d.home.run(&["storage", "--json"]));
    assert_eq!(report["bodies"]["with_bodies"], 1, "{report}");
    assert_eq!(report["bodies"]["turns"], TURNS + 1, "{report}");
    let text = String::from_utf8(d.home.run(&["status"]).stdout).unwrap();
    assert!(
        text.contains("storage:") && text.contains("retention last ran"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{TURNS} turns' messages dropped")),
        "{text}"
    );
}
