//! Shared fixtures of the `search_*` tests (included with `#[path]`; compiled alone it
//! holds no tests).
#![allow(dead_code, clippy::unwrap_used, clippy::new_without_default)]

use std::path::PathBuf;

use metaclaw_memory::{Kind, MemoryUnit, NewUnit, Source, db};
use metaclaw_store::Store;
use tempfile::TempDir;

pub const DAY_MS: i64 = 86_400_000;
/// A fixed "now" (2026-01-01) so every test sees the same ages.
pub const NOW: i64 = 1_767_225_600_000;

pub struct Fixture {
    pub dir: TempDir,
    pub store: Store,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
        Fixture { dir, store }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("metaclaw.db")
    }

    /// Inserts a unit created a day before [`NOW`].
    pub fn add(&mut self, scope: &str, kind: Kind, content: &str) -> MemoryUnit {
        self.add_with(new_unit(scope, kind, content))
    }

    pub fn add_with(&mut self, new: NewUnit) -> MemoryUnit {
        db::insert(self.store.connection_mut(), &new, "test", NOW - DAY_MS).unwrap()
    }

    /// Sets a column directly (statuses, times): the store's update API is not what these
    /// tests are about.
    pub fn set(&self, id: &str, column: &str, value: rusqlite::types::Value) {
        let sql = format!("UPDATE memory_units SET {column} = ?1 WHERE id = ?2");
        self.store
            .connection()
            .execute(&sql, rusqlite::params![value, id])
            .unwrap();
    }
}

pub fn new_unit(scope: &str, kind: Kind, content: &str) -> NewUnit {
    NewUnit {
        scope: scope.into(),
        kind,
        content: content.into(),
        summary: String::new(),
        fact_key: None,
        importance: 0.5,
        confidence: 0.8,
        pinned: false,
        source: Source::Manual,
        source_session: None,
        source_turn: None,
        tags: vec![],
        entities: vec![],
        expires_ms: None,
    }
}

pub fn query(scope: &str, text: &str) -> metaclaw_memory::SearchQuery {
    metaclaw_memory::SearchQuery {
        scope: scope.into(),
        text: text.into(),
        kinds: vec![],
        limit: 10,
        include_inactive: false,
    }
}

/// A small realistic scope: preferences, project state, rules, facts, episodes.
pub fn seed(f: &mut Fixture, scope: &str) -> Vec<MemoryUnit> {
    [
        (
            Kind::Preference,
            "Always write dates and times in ISO 8601 with an explicit timezone offset, \
             for example 2026-03-01T09:30:00+01:00.",
        ),
        (
            Kind::Preference,
            "The user prefers tabs over spaces in Go code.",
        ),
        (
            Kind::ProjectState,
            "The billing service runs on PostgreSQL 16 behind PgBouncer.",
        ),
        (
            Kind::ProceduralObservation,
            "Back up a config file before editing it.",
        ),
        (Kind::Semantic, "The staging cluster lives in eu-west-1."),
        (
            Kind::Episodic,
            "It took a long time to find the flaky test in the deploy pipeline.",
        ),
        (
            Kind::WorkingSummary,
            "Last session: migrated the invoice exporter to the new queue.",
        ),
    ]
    .into_iter()
    .map(|(kind, content)| f.add(scope, kind, content))
    .collect()
}
