//! What extraction reads and what it produces.

use crate::unit::Kind;

/// One turn: the user's new message and the assistant's answer. The caller strips
/// MetaClaw's `<metaclaw-context>` block and agent metadata first (extraction drops any
/// block it still finds, defensively).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnText {
    pub user: String,
    pub assistant: String,
    pub session_id: String,
    pub turn_index: u64,
}

/// A memory proposed by an extractor, before reconciliation with what is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub kind: Kind,
    /// One self-contained sentence, in the user's language.
    pub content: String,
    /// Normalised slot (`[a-z0-9_:.-]`, at most 64 chars) such as `pref:time_format`.
    pub fact_key: Option<String>,
    /// 0..=1.
    pub importance: f32,
    /// 0..=1.
    pub confidence: f32,
    pub tags: Vec<String>,
    /// The `turn_index` the fact came from, when known.
    pub source_turn: Option<u64>,
}
