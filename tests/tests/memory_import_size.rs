//! The admin API takes back whatever its own export produced, however large, while the
//! engine keeps serving.

mod common;

use common::memory_daemon::MemoryDaemon;
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn an_export_larger_than_the_admin_body_limit_imports_whole() {
    let d = MemoryDaemon::start("").await;
    let (s, created) = d
        .admin(
            Method::POST,
            "/api/memory",
            Some(json!({"kind": "semantic", "content": "The build server is called ci-7."})),
        )
        .await;
    assert_eq!(s, 200, "{created}");
    let export = reqwest::Client::new()
        .get(d.url("/api/memory/export"))
        .bearer_auth(&d.token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let template: Value = serde_json::from_str(export.trim()).unwrap();
    // 800 units of ~6,000 characters: a 5 MB file, over the 2 MB limit of other admin routes.
    let mut big = String::new();
    for i in 0..800 {
        let mut unit = template.clone();
        unit["id"] = format!("imported-{i:04}").into();
        unit["content"] = format!("fact {i}: {}", "lorem ipsum dolor ".repeat(330)).into();
        big.push_str(&unit.to_string());
        big.push('\n');
    }
    assert!(big.len() > 4_000_000);
    let r = reqwest::Client::new()
        .post(d.url("/api/memory/import"))
        .bearer_auth(&d.token)
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let report: Value = r.json().await.unwrap();
    assert_eq!(report["imported"], 800, "{report}");
    let (_, stats) = d.admin(Method::GET, "/api/memory/stats", None).await;
    assert_eq!(stats["total"], 801, "{stats}");
    // Chat kept working.
    d.chat("after-import", "default", "still there?", false)
        .await;
}
