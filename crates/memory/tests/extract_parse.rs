#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_memory::Kind;
use metaclaw_memory::extract::parse;

#[test]
fn clean_object() {
    let p = parse(
        r#"{"memories": [{"kind": "preference", "content": "The user prefers tabs.",
            "fact_key": "pref:indentation", "importance": 0.8, "confidence": 0.9,
            "tags": ["style"], "source_turn": 3}]}"#,
    )
    .unwrap();
    assert!(p.rejected.is_empty());
    let c = &p.candidates[0];
    assert_eq!(c.kind, Kind::Preference);
    assert_eq!(c.content, "The user prefers tabs.");
    assert_eq!(c.fact_key.as_deref(), Some("pref:indentation"));
    assert_eq!((c.importance, c.confidence), (0.8, 0.9));
    assert_eq!(c.tags, ["style"]);
    assert_eq!(c.source_turn, Some(3));
}

#[test]
fn fenced_with_prose() {
    let t = "Sure! Here is what I found [1]:\n```json\n{\"memories\": [{\"kind\": \"project_state\", \"content\": \"用户的项目使用 PostgreSQL。\", \"fact_key\": \"project:database\"}]}\n```\nHope that helps.";
    let p = parse(t).unwrap();
    assert_eq!(p.candidates.len(), 1);
    assert_eq!(p.candidates[0].content, "用户的项目使用 PostgreSQL。");
    // Missing numbers get defaults.
    assert_eq!(p.candidates[0].importance, 0.5);
}

#[test]
fn bare_array() {
    let p = parse(r#"[{"kind": "semantic", "content": "The user lives in Lyon."}]"#).unwrap();
    assert_eq!(p.candidates.len(), 1);
    assert_eq!(p.candidates[0].fact_key, None);
}

#[test]
fn bad_items_are_rejected_one_by_one() {
    let long = "x".repeat(600);
    let t = format!(
        r#"{{"memories": [
            {{"kind": "preference", "content": "The user prefers dark mode.", "fact_key": "Pref: UI Theme!!", "importance": 7, "confidence": -1}},
            {{"kind": "feeling", "content": "The user is happy."}},
            {{"kind": "working_summary", "content": "Summary."}},
            {{"kind": "semantic", "content": "   "}},
            {{"kind": "semantic", "content": "{long}"}},
            {{"content": "No kind."}},
            42,
            {{"kind": "procedural_observation", "content": "Back up files\nbefore editing.", "tags": "Safety, backups", "importance": "0.9"}}
        ]}}"#
    );
    let p = parse(&t).unwrap();
    assert_eq!(p.candidates.len(), 2, "{:?}", p.rejected);
    let dark = &p.candidates[0];
    assert_eq!(dark.fact_key.as_deref(), Some("pref:ui_theme"));
    assert_eq!((dark.importance, dark.confidence), (1.0, 0.0));
    let backup = &p.candidates[1];
    assert_eq!(backup.content, "Back up files before editing.");
    assert_eq!(backup.tags, ["safety", "backups"]);
    assert_eq!(backup.importance, 0.9);
    let reasons: Vec<&str> = p.rejected.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(p.rejected.len(), 6, "{reasons:?}");
    assert!(reasons[0].contains("unknown kind"));
    assert!(reasons[1].contains("working_summary"));
    assert_eq!(reasons[2], "empty content");
    assert!(reasons[3].contains("more than 500"));
    assert_eq!(reasons[4], "missing \"kind\"");
    assert_eq!(
        p.rejected[5],
        ("#7".to_string(), "item is not a JSON object".to_string())
    );
    assert_eq!(p.rejected[0].0, "The user is happy.");
}

#[test]
fn long_fact_keys_are_cut() {
    let key = "pref:".to_string() + &"a".repeat(100);
    let t = format!(r#"[{{"kind": "preference", "content": "x y z", "fact_key": "{key}"}}]"#);
    let k = parse(&t).unwrap().candidates[0].fact_key.clone().unwrap();
    assert_eq!(k.len(), 64);
    assert!(
        k.chars()
            .all(|c| c.is_ascii_lowercase() || "0123456789_:.-".contains(c))
    );
}

#[test]
fn empty_answers_are_ok() {
    assert!(parse("").unwrap().candidates.is_empty());
    assert!(parse("  \n").unwrap().candidates.is_empty());
    let p = parse(r#"{"memories": []}"#).unwrap();
    assert!(p.candidates.is_empty() && p.rejected.is_empty());
    assert!(
        parse("Nothing durable here: []")
            .unwrap()
            .candidates
            .is_empty()
    );
}

#[test]
fn garbage_is_an_error() {
    assert!(parse("I could not find anything worth remembering.").is_err());
    assert!(parse("{\"memories\": [ {\"kind\": ").is_err());
    assert!(parse("[1, 2, 3]").is_err());
}
