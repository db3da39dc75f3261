//! Extraction: turning conversation turns into candidate memories.
//!
//! Three producers, all pure: the extraction model's prompt, schema and answer parser
//! (`prompt`, `schema`, `parse`), a rule-based fallback for when no model is configured
//! (`extract_rules`), and the session digest (`working_summary`). Candidates then go through
//! `crate::reconcile` before anything is stored.
//!
//! The caller must hand over only the new user and assistant messages of each turn, already
//! stripped of MetaClaw's `<metaclaw-context>` block and of agent metadata. Every producer
//! still drops any such block it sees, so memory never feeds on its own injected text.

mod candidate;
pub mod parse;
pub mod prompt;
pub mod rules;
pub mod schema;
pub mod summary;

pub use candidate::{Candidate, TurnText};
pub use parse::{ParseError, Parsed, parse};
pub use prompt::prompt;
pub use rules::extract_rules;
pub use schema::{response_format, schema};
pub use summary::working_summary;
