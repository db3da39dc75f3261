//! Rule-based extraction: the fallback when no extraction model is configured.
//!
//! It reads the USER side only (the assistant's advice is not a fact about the user), with
//! MetaClaw's injected block, fenced code and quoted lines (`> …`) removed first. Each
//! sentence is matched against a phrase table in English, Chinese, Spanish, French and German
//! (`patterns.rs`); a match at the start of a sentence gives one short content sentence and
//! a fact key. Questions never match. At most [`MAX_PER_TURN`] candidates per turn, each
//! with confidence [`CONFIDENCE`], below the model's; a raw turn is never stored.

mod patterns;
mod sentences;

pub(crate) use sentences::user_prose;

use patterns::{FILLERS, Form, Key, OBJECT_LEADS, PATTERNS, Pattern};
use sentences::{is_question, sentences, strip_prefix_ci};

use super::candidate::{Candidate, TurnText};
use crate::text::{is_cjk, normalized, slot, tokens};
use crate::unit::Kind;

pub const MAX_PER_TURN: usize = 3;
pub const CONFIDENCE: f32 = 0.6;
/// Objects longer than this are explanations, not crisp facts.
pub const MAX_OBJECT_CHARS: usize = 200;
/// Significant words of the object that make up a derived fact key.
const KEY_WORDS: usize = 3;

/// Candidates from the user side of `turns`, in order.
pub fn extract_rules(turns: &[TurnText]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for turn in turns {
        let mut seen: Vec<String> = Vec::new();
        for sentence in sentences(&user_prose(&turn.user)) {
            if seen.len() >= MAX_PER_TURN {
                break;
            }
            let Some(mut c) = match_sentence(sentence) else {
                continue;
            };
            let norm = normalized(&c.content);
            if seen.contains(&norm) {
                continue;
            }
            seen.push(norm);
            c.source_turn = Some(turn.turn_index);
            out.push(c);
        }
    }
    out
}

fn match_sentence(sentence: &str) -> Option<Candidate> {
    if is_question(sentence) {
        return None;
    }
    let body = skip_fillers(sentence);
    PATTERNS.iter().find_map(|p| {
        let object = strip_prefix_ci(body, p.trigger)?;
        candidate(p, body, object)
    })
}

fn skip_fillers(mut s: &str) -> &str {
    'outer: loop {
        for f in FILLERS {
            if let Some(rest) = strip_prefix_ci(s, f) {
                s = trim_lead(rest);
                continue 'outer;
            }
        }
        return s;
    }
}

fn trim_lead(s: &str) -> &str {
    s.trim_start_matches(|c: char| c.is_whitespace() || ",:;，：、-—".contains(c))
}

fn candidate(p: &Pattern, body: &str, after_trigger: &str) -> Option<Candidate> {
    let mut rest = trim_lead(after_trigger);
    for lead in OBJECT_LEADS {
        if let Some(r) = strip_prefix_ci(rest, lead) {
            rest = trim_lead(r);
        }
    }
    let object = rest.trim_end_matches(|c: char| c.is_whitespace() || ".!;,。！；，…".contains(c));
    let chars = object.chars().count();
    let min = if object.chars().any(is_cjk) { 2 } else { 3 };
    if chars < min || chars > MAX_OBJECT_CHARS || tokens(object).is_empty() {
        return None;
    }
    let words: Vec<&str> = object.split_whitespace().collect();
    let first = words
        .first()
        .map(|w| {
            w.to_lowercase()
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_string()
        })
        .unwrap_or_default();
    if p.deny.contains(&first.as_str()) || (p.max_words > 0 && words.len() > p.max_words) {
        return None;
    }
    let content = match p.form {
        Form::Template(t) => t.replacen("{}", object, 1),
        Form::Imperative => {
            // `object` is a slice of `body`: keep the user's words from the trigger on.
            let end = body.len() - rest.len() + object.len();
            let words = capitalise(&body[..end]);
            let stop = if object.chars().last().is_some_and(is_cjk) {
                "。"
            } else {
                "."
            };
            format!("{words}{stop}")
        }
    };
    Some(Candidate {
        kind: p.kind,
        content,
        fact_key: key(p.key, object),
        importance: importance(p.kind),
        confidence: CONFIDENCE,
        tags: Vec::new(),
        source_turn: None,
    })
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `pref:dark_mode` from "dark mode in every editor": the prefix and the first significant
/// words that have an ASCII spelling; `None` when there are none (an all-CJK object).
fn key(key: Key, object: &str) -> Option<String> {
    match key {
        Key::Fixed(k) => Some(k.to_string()),
        Key::Prefix(prefix) => {
            let words: Vec<String> = tokens(object)
                .into_iter()
                .filter_map(|t| slot(&t))
                .take(KEY_WORDS)
                .collect();
            if words.is_empty() {
                return None;
            }
            slot(&format!("{prefix}:{}", words.join("_")))
        }
    }
}

fn importance(kind: Kind) -> f32 {
    match kind {
        Kind::Preference | Kind::ProceduralObservation => 0.7,
        _ => 0.6,
    }
}
