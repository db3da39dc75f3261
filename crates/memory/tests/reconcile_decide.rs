#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_memory::extract::Candidate;
use metaclaw_memory::reconcile::{Decision, decide, reconcile_batch};
use metaclaw_memory::{Kind, MemoryUnit, Source, Status};

fn cand(key: Option<&str>, content: &str) -> Candidate {
    Candidate {
        kind: Kind::Preference,
        content: content.into(),
        fact_key: key.map(str::to_string),
        importance: 0.7,
        confidence: 0.9,
        tags: vec![],
        source_turn: Some(1),
    }
}

fn unit(id: &str, key: Option<&str>, content: &str) -> MemoryUnit {
    MemoryUnit {
        id: id.into(),
        scope: "default".into(),
        kind: Kind::Preference,
        content: content.into(),
        summary: String::new(),
        fact_key: key.map(str::to_string),
        importance: 0.7,
        confidence: 0.9,
        pinned: false,
        status: Status::Active,
        superseded_by: None,
        source: Source::Extracted,
        source_session: None,
        source_turn: None,
        tags: vec![],
        entities: vec![],
        access_count: 0,
        last_accessed_ms: None,
        created_ms: 0,
        updated_ms: 0,
        expires_ms: None,
        version: 1,
    }
}

const KEY: Option<&str> = Some("pref:indentation");

#[test]
fn changed_preference_supersedes() {
    let old = [unit("u1", KEY, "The user prefers tabs for indentation.")];
    let d = decide(&cand(KEY, "The user prefers spaces for indentation."), &old);
    assert_eq!(
        d,
        Decision::Supersede {
            old_id: "u1".into()
        }
    );
    // Short sentences too, and in Chinese.
    let old = [unit("u2", KEY, "I prefer tabs")];
    assert_eq!(
        decide(&cand(KEY, "I prefer spaces"), &old),
        Decision::Supersede {
            old_id: "u2".into()
        }
    );
    let old = [unit("u3", Some("pref:theme"), "用户喜欢深色主题。")];
    assert_eq!(
        decide(&cand(Some("pref:theme"), "用户喜欢浅色主题。"), &old),
        Decision::Supersede {
            old_id: "u3".into()
        }
    );
}

#[test]
fn same_fact_twice_is_ignored() {
    let old = [unit("u1", KEY, "The user prefers tabs for indentation.")];
    let ignored = Decision::Ignore {
        duplicate_of: "u1".into(),
    };
    assert_eq!(
        decide(&cand(KEY, "The user prefers tabs for indentation."), &old),
        ignored
    );
    assert_eq!(
        decide(&cand(None, "user prefers TABS for indentation"), &old),
        ignored
    );
    // Less specific under the same slot: nothing new.
    assert_eq!(decide(&cand(KEY, "The user prefers tabs."), &old), ignored);
}

#[test]
fn paraphrase_is_ignored() {
    let old = [unit(
        "u1",
        None,
        "The user's project uses PostgreSQL 16 as its database.",
    )];
    let d = decide(
        &cand(
            None,
            "The user's project uses PostgreSQL 16 as the database",
        ),
        &old,
    );
    assert_eq!(
        d,
        Decision::Ignore {
            duplicate_of: "u1".into()
        }
    );
    let old = [unit(
        "u2",
        Some("pref:answers"),
        "The user wants answers in British English.",
    )];
    let d = decide(
        &cand(None, "User wants all answers in British English."),
        &old,
    );
    assert_eq!(
        d,
        Decision::Ignore {
            duplicate_of: "u2".into()
        }
    );
}

#[test]
fn more_specific_restatement_updates_in_place() {
    let old = [unit("u1", KEY, "The user prefers tabs.")];
    let d = decide(&cand(KEY, "The user prefers tabs, shown 4 wide."), &old);
    assert_eq!(
        d,
        Decision::Update {
            id: "u1".into(),
            content: "The user prefers tabs, shown 4 wide.".into()
        }
    );
}

#[test]
fn unrelated_is_added() {
    let old = [unit("u1", KEY, "The user prefers tabs for indentation.")];
    assert_eq!(
        decide(
            &cand(Some("project:database"), "The project uses MySQL."),
            &old
        ),
        Decision::Add
    );
    assert_eq!(
        decide(&cand(None, "The user lives in Lyon."), &[]),
        Decision::Add
    );
}

#[test]
fn different_slots_need_a_near_identical_wording() {
    let old = [unit(
        "u1",
        Some("project:postgresql"),
        "用户的项目使用PostgreSQL数据库。",
    )];
    let d = decide(
        &cand(Some("project:mysql"), "用户的项目使用MySQL数据库。"),
        &old,
    );
    assert_eq!(d, Decision::Add);
}

#[test]
fn inactive_units_do_not_count() {
    let mut old = unit("u1", KEY, "The user prefers tabs for indentation.");
    old.status = Status::Superseded;
    assert_eq!(
        decide(&cand(KEY, "The user prefers tabs for indentation."), &[old]),
        Decision::Add
    );
}

#[test]
fn pinned_units_are_never_changed() {
    let mut pinned = unit("p1", KEY, "The user prefers tabs for indentation.");
    pinned.pinned = true;
    let old = [pinned];
    let beside = Decision::AddBesidePinned {
        pinned_id: "p1".into(),
    };
    assert_eq!(
        decide(&cand(KEY, "The user prefers spaces for indentation."), &old),
        beside
    );
    assert_eq!(
        decide(
            &cand(KEY, "The user prefers tabs for indentation, 4 wide."),
            &old
        ),
        beside
    );
    // A duplicate of a pinned unit is still just a duplicate.
    assert_eq!(
        decide(&cand(KEY, "The user prefers tabs for indentation."), &old),
        Decision::Ignore {
            duplicate_of: "p1".into()
        }
    );
}

#[test]
fn batch_dedups_and_later_slot_values_win() {
    let cands = vec![
        cand(None, "The user lives in Lyon."),
        cand(None, "The user lives in Lyon"),
        cand(KEY, "The user prefers tabs for indentation."),
        cand(KEY, "The user prefers spaces for indentation."),
        cand(Some("pref:name"), "The user wants to be called Sam."),
        cand(Some("pref:name"), "The user wants to be called Sam."),
    ];
    let existing = [unit("u1", KEY, "The user prefers tabs for indentation.")];
    let out = reconcile_batch(cands, |_| existing.to_vec());
    let contents: Vec<&str> = out.iter().map(|(c, _)| c.content.as_str()).collect();
    assert_eq!(
        contents,
        [
            "The user lives in Lyon.",
            "The user prefers spaces for indentation.",
            "The user wants to be called Sam.",
        ]
    );
    assert_eq!(out[0].1, Decision::Add);
    assert_eq!(
        out[1].1,
        Decision::Supersede {
            old_id: "u1".into()
        }
    );
    assert_eq!(out[2].1, Decision::Add);
}
