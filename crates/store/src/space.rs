//! Where the database's bytes go: the file, its write-ahead log, the free pages a vacuum
//! can give back, and the rest by what it holds (SQLite's `dbstat`, one pass over the pages).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::open::Store;

/// The database on disk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Space {
    /// The main file.
    pub file_bytes: u64,
    /// The write-ahead log beside it (`-wal`), folded into the file at checkpoints.
    pub wal_bytes: u64,
    /// Pages no table uses: reused by new writes, or given back by a vacuum.
    pub free_bytes: u64,
    /// The used pages by what they hold, largest first.
    pub parts: Vec<SpacePart>,
    /// Whether free pages can be given back a few at a time (`auto_vacuum = incremental`);
    /// otherwise only a full rewrite of the file shrinks it.
    pub incremental_vacuum: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpacePart {
    /// `conversations`, `injected blocks`, `memories`, `embeddings`, `skills`, `learning`,
    /// `other`.
    pub what: String,
    pub bytes: u64,
}

impl Space {
    /// The main file and its log together.
    pub fn total_bytes(&self) -> u64 {
        self.file_bytes + self.wal_bytes
    }
}

/// What a table holds, by its name (an index or an FTS table's shadow tables count with
/// their table).
fn category(table: &str) -> &'static str {
    match table {
        "turns" | "body_parts" | "body_part_data" | "sessions" => "conversations",
        "injected_blocks" => "injected blocks",
        "embeddings" => "embeddings",
        "skill_events" => "skills",
        "learn_samples" | "learning_steps" | "learning_usage" => "learning",
        t if t.starts_with("memory_") => "memories",
        _ => "other",
    }
}

impl Store {
    /// The file sizes and, from `dbstat`, what the used pages hold. Reads every page's
    /// header once: about a second per gigabyte, so callers cache it.
    pub fn space(&self) -> Result<Space, StoreError> {
        let size = |suffix: &str| {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            std::fs::metadata(p).map_or(0, |m| m.len())
        };
        let page_size: u64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let free_pages: u64 = self
            .conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
        let auto_vacuum: i64 = self
            .conn
            .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
        let mut by_what: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut stmt = self.conn.prepare(
            "SELECT COALESCE(s.tbl_name, d.name), SUM(d.pgsize)
             FROM dbstat AS d LEFT JOIN sqlite_schema AS s ON s.name = d.name
             WHERE d.aggregate = TRUE GROUP BY 1",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        for row in rows {
            let (table, bytes) = row?;
            *by_what.entry(category(&table)).or_default() += u64::try_from(bytes).unwrap_or(0);
        }
        // The pages `dbstat` does not list (incremental vacuum's pointer maps) count as other.
        let listed: u64 = by_what.values().sum();
        let unlisted = self.used_bytes()?.saturating_sub(listed);
        if unlisted > 0 {
            *by_what.entry("other").or_default() += unlisted;
        }
        let mut parts: Vec<SpacePart> = by_what
            .into_iter()
            .map(|(what, bytes)| SpacePart {
                what: what.to_owned(),
                bytes,
            })
            .collect();
        parts.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.what.cmp(&b.what)));
        Ok(Space {
            file_bytes: size(""),
            wal_bytes: size("-wal"),
            free_bytes: free_pages * page_size,
            parts,
            incremental_vacuum: auto_vacuum == 2,
        })
    }

    /// Bytes the tables use (the pages in use, free pages not counted): what a size limit
    /// is measured against, cheap to read (two pragmas).
    pub fn used_bytes(&self) -> Result<u64, StoreError> {
        let (pages, free, page_size): (u64, u64, u64) = (
            self.conn.query_row("PRAGMA page_count", [], |r| r.get(0))?,
            self.conn
                .query_row("PRAGMA freelist_count", [], |r| r.get(0))?,
            self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?,
        );
        Ok(pages.saturating_sub(free) * page_size)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::NewTurn;

    #[test]
    fn the_parts_add_up_to_the_used_pages_and_turns_count_as_conversations() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let turns: Vec<NewTurn> = (0..50u64)
            .map(|i| NewTurn {
                session_id: format!("s{i}"),
                turn_type: "main".into(),
                request_json: format!(
                    r#"{{"messages":[{{"role":"user","content":"{}"}}]}}"#,
                    // Numbers that do not repeat, so compression cannot hide the text.
                    (0..400u64)
                        .map(|k| format!("{:x}", (i * 7919 + k) * 2_654_435_761 % 1_000_003))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                status: 200,
                created_at_ms: i64::try_from(i).unwrap(),
                ..NewTurn::default()
            })
            .collect();
        store.insert_turns(&turns).unwrap();
        let space = store.space().unwrap();
        let used: u64 = space.parts.iter().map(|p| p.bytes).sum();
        assert_eq!(used, store.used_bytes().unwrap());
        assert_eq!(space.parts[0].what, "conversations", "{space:?}");
        assert!(space.file_bytes + space.wal_bytes >= used);
        assert!(
            space.incremental_vacuum,
            "a new database gives space back incrementally"
        );
    }
}
