//! Everyday words: a built-in skill is not injected for them alone.
//!
//! The built-in bank's procedures mention meetings, mornings and writing in passing, so a
//! request like "Write the log line for the stand-up meeting that began at nine this
//! morning" used to bring in the 1,900-character time-blocking procedure through "meeting"
//! and "morning". A built-in now needs a matched word outside this list, or an everyday
//! word in its own name (a skill named for meetings is about meetings). The words of asking
//! and doing that never select a lesson ([`super::lessons::GENERIC`]) are everyday too.

use super::tokenize::for_each_token;

/// Times of day and calendar words, and nouns every kind of task uses.
const EVERYDAY: &[&str] = &[
    "afternoon",
    "call",
    "date",
    "early",
    "evening",
    "hour",
    "idea",
    "late",
    "line",
    "meeting",
    "message",
    "minute",
    "month",
    "morning",
    "night",
    "note",
    "people",
    "person",
    "question",
    "soon",
    "stuff",
    "team",
    "text",
    "time",
    "tonight",
    "work",
    "year",
    "yesterday",
];

/// Stems of the everyday words, as the tokenizer produces them, sorted.
pub(crate) fn everyday_stems() -> Vec<String> {
    let mut out = super::lessons::generic_stems();
    for w in EVERYDAY {
        for_each_token(w, |t| out.push(t.to_owned()));
    }
    out.sort_unstable();
    out.dedup();
    out
}
