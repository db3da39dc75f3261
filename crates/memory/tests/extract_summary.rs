#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_memory::Kind;
use metaclaw_memory::extract::{TurnText, working_summary};

fn turn(i: u64, user: &str) -> TurnText {
    TurnText {
        user: user.into(),
        assistant: "Sure, done.".into(),
        session_id: "s".into(),
        turn_index: i,
    }
}

#[test]
fn digest_of_topics_and_latest_requests() {
    let turns = [
        turn(0, "Set up the postgres migration for invoices."),
        turn(1, "Now add an index to the invoices table in postgres."),
        turn(2, "Write a test for the invoices migration."),
        turn(
            3,
            "Deploy the invoices service <metaclaw-context>SECRET</metaclaw-context>",
        ),
    ];
    let c = working_summary(&turns).unwrap();
    assert_eq!(c.kind, Kind::WorkingSummary);
    assert_eq!(c.fact_key.as_deref(), Some("session:summary"));
    assert_eq!(c.source_turn, Some(3));
    assert!(
        c.content
            .starts_with("Session of 4 turn(s). Topics: invoice, postgre"),
        "{}",
        c.content
    );
    assert!(
        c.content.contains("\"Deploy the invoices service\""),
        "{}",
        c.content
    );
    assert!(
        !c.content.contains("Set up the postgres"),
        "only the last three requests"
    );
    assert!(!c.content.contains("SECRET"));
}

#[test]
fn bounded_and_none_when_empty() {
    assert!(working_summary(&[]).is_none());
    assert!(
        working_summary(&[
            turn(0, "  "),
            turn(1, "<metaclaw-context>x</metaclaw-context>")
        ])
        .is_none()
    );
    let huge = "数据库迁移 ".repeat(10_000);
    let turns: Vec<TurnText> = (0..100).map(|i| turn(i, &huge)).collect();
    let c = working_summary(&turns).unwrap();
    assert!(
        c.content.chars().count() <= 801,
        "{}",
        c.content.chars().count()
    );
    assert!(c.content.contains("数据"), "{}", c.content);
}
