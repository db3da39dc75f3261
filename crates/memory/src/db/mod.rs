//! Storage of memory units on the tables of store migration v3: free functions over a
//! borrowed rusqlite connection (`Store::connection()` / `connection_mut()`).
//!
//! Reads take `&Connection`; writes take `&mut Connection` and run in one immediate
//! transaction each, writing the unit, its new version and an audit event together. Time is
//! passed in (`now_ms`) so callers and tests control it. The FTS tables are kept in sync by
//! triggers in the database, never here.

mod access;
mod cursor;
mod export;
mod get;
mod history;
mod id;
mod import;
mod insert;
mod journal;
mod lifecycle;
mod list;
mod policy;
mod row;
mod save;
mod stats;
mod update;
mod validate;

pub use access::record_access;
pub use export::export_jsonl;
pub use get::{active_in_scope, by_fact_key, get};
pub use history::{Event, EventQuery, Version, events, history};
pub use import::{ImportReport, import_jsonl};
pub use insert::insert;
pub use journal::Action;
pub use lifecycle::{archive, purge, restore, set_pinned, supersede};
pub use list::{DEFAULT_LIMIT, ListQuery, MAX_LIMIT, Page, SortBy, list, list_plan};
pub use policy::{PolicyRevision, load_policy, policy_history, save_policy};
pub use stats::{Stats, active_count, stats};
pub use update::{UnitPatch, update};
pub use validate::MAX_CONTENT_CHARS;
