//! The long-conversation recall benchmark: how often memory search finds the turns that
//! answer a question about a long, multi-session conversation, against a plain BM25 over the
//! same turns.
//!
//! The conversations and their labelled questions are in `tests/data/recall/` (written for
//! this benchmark; `build.py` there turns the hand-written sources into the JSON read here).
//! Each conversation gets a fresh database; every turn (a user message and the reply) is
//! stored as one episodic unit dated by its session, and every question is run through
//! `metaclaw_memory::search_with` and through [`bm25`]. A question's recall at k is the
//! share of its evidence turns among the first k hits.

pub mod bm25;
pub mod data;
pub mod metrics;
pub mod report;
pub mod run;
pub mod vectors;
