//! Storage of memory units on the tables of store migration v3: free functions over a
//! borrowed rusqlite connection (`Store::connection()` / `connection_mut()`).
//!
//! Reads take `&Connection`; writes take `&mut Connection` and run in one immediate
//! transaction each, writing the unit, its new version and an audit event together. Time is
//! passed in (`now_ms`) so callers and tests control it.

mod get;
mod id;
mod insert;
mod journal;
mod row;
mod validate;

pub use get::{active_in_scope, by_fact_key, get};
pub use insert::insert;
pub use journal::Action;
pub use validate::MAX_CONTENT_CHARS;
