//! The working summary: a compact digest of a session (its topics and the last few things
//! the user asked for), stored under one slot so the newest session's digest supersedes the
//! previous one.

use std::collections::HashMap;

use super::candidate::{Candidate, TurnText};
use super::rules::user_prose;
use crate::text::{clip, is_cjk, tokens};
use crate::unit::Kind;

pub const FACT_KEY: &str = "session:summary";
/// Upper bound of the content, in chars.
pub const MAX_CHARS: usize = 800;
const TOPICS: usize = 6;
const REQUESTS: usize = 3;
const REQUEST_CHARS: usize = 160;
/// Topics come from the newest turns, each read up to a bound, so the work is bounded too.
const TOPIC_TURNS: usize = 20;
const TOPIC_CHARS: usize = 2_000;

/// `None` when the user said nothing in the newest 20 turns (after stripping injected text
/// and code).
pub fn working_summary(turns: &[TurnText]) -> Option<Candidate> {
    let skip = turns.len().saturating_sub(TOPIC_TURNS);
    let requests: Vec<(u64, String)> = turns[skip..]
        .iter()
        .map(|t| (t.turn_index, clip(&user_prose(&t.user), TOPIC_CHARS)))
        .filter(|(_, u)| !u.is_empty())
        .collect();
    let last_turn = requests.last().map(|(i, _)| *i)?;
    let topics = topics(requests.iter().map(|(_, u)| u.as_str()));
    let mut content = format!("Session of {} turn(s).", turns.len());
    if !topics.is_empty() {
        content.push_str(&format!(" Topics: {}.", topics.join(", ")));
    }
    let recent: Vec<String> = requests
        .iter()
        .rev()
        .take(REQUESTS)
        .rev()
        .map(|(_, u)| format!("\"{}\"", clip(u, REQUEST_CHARS)))
        .collect();
    content.push_str(&format!(" Latest requests: {}.", recent.join("; ")));
    Some(Candidate {
        kind: Kind::WorkingSummary,
        content: clip(&content, MAX_CHARS),
        fact_key: Some(FACT_KEY.to_string()),
        importance: 0.5,
        confidence: 0.8,
        tags: vec!["session".to_string()],
        source_turn: Some(last_turn),
    })
}

/// Words of requests that name no topic.
const GENERIC: &[&str] = &[
    "please", "could", "would", "should", "want", "need", "make", "help", "like", "just", "also",
    "what", "when", "where", "which", "there", "here", "have", "from", "into", "about", "them",
    "then", "than", "doe", "doing", "done", "thank", "thanks", "hello", "okay", "can't", "don't",
    "it's", "i'm", "will", "some", "more", "other", "very", "with", "tell", "show", "give", "know",
    "think", "let's", "again", "now",
];

/// The most frequent significant words (4+ letters, or CJK bigrams), ties by first use.
fn topics<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut counts: HashMap<String, (usize, usize)> = HashMap::new();
    let mut order = 0;
    for t in texts {
        for tok in tokens(t) {
            let cjk = tok.chars().all(is_cjk);
            let long_enough = if cjk {
                tok.chars().count() >= 2
            } else {
                tok.chars().count() >= 4
            };
            if !long_enough
                || tok.chars().all(|c| c.is_ascii_digit())
                || GENERIC.contains(&tok.as_str())
            {
                continue;
            }
            let e = counts.entry(tok).or_insert((0, order));
            e.0 += 1;
            order += 1;
        }
    }
    let mut v: Vec<(String, (usize, usize))> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    v.into_iter().take(TOPICS).map(|(t, _)| t).collect()
}
