//! Tolerant reading of the extraction model's answer.
//!
//! The JSON is found with `metaclaw_wire::answer_json` (fences, prose around it, or a bare
//! array despite the schema), then each item is validated on its own: one bad item is a
//! rejection with a reason, never a lost batch.

use metaclaw_wire::answer_json;
use serde_json::{Map, Value};

use super::candidate::Candidate;
use crate::text::{clip, one_line, slot, strip_injected};
use crate::unit::Kind;

/// Longest accepted content, in chars; a memory is one sentence, not a transcript.
pub const MAX_CONTENT_CHARS: usize = 500;
/// Shortest accepted content, in chars (CJK facts can be short).
pub const MIN_CONTENT_CHARS: usize = 2;
const MAX_TAGS: usize = 8;
const MAX_TAG_CHARS: usize = 32;
const DEFAULT_IMPORTANCE: f32 = 0.5;
const DEFAULT_CONFIDENCE: f32 = 0.7;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub candidates: Vec<Candidate>,
    /// (the item's content clipped to 80 chars, or `#3` for the 1-based position; reason).
    pub rejected: Vec<(String, String)>,
}

/// The answer held no JSON of the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// Reads `{"memories": [...]}` or a bare array of memory objects, fenced or among prose.
/// Empty text and `{"memories": []}` are an empty answer; text without such JSON is an error.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    if text.trim().is_empty() {
        return Ok(Parsed::default());
    }
    let items = answer_json::find_items(text, "memories").ok_or_else(|| {
        ParseError(format!(
            "no {{\"memories\": [...]}} object or array of memories found in the answer ({} chars)",
            text.chars().count()
        ))
    })?;
    let mut parsed = Parsed::default();
    for (i, item) in items.into_iter().enumerate() {
        match candidate(i, item) {
            Ok(c) => parsed.candidates.push(c),
            Err(r) => parsed.rejected.push(r),
        }
    }
    Ok(parsed)
}

fn candidate(index: usize, item: Value) -> Result<Candidate, (String, String)> {
    let label = format!("#{}", index + 1);
    let Value::Object(m) = item else {
        return Err((label, "item is not a JSON object".into()));
    };
    let raw_content = m.get("content").and_then(Value::as_str).unwrap_or("");
    let content = one_line(&strip_injected(raw_content));
    let shown = if content.is_empty() {
        label
    } else {
        clip(&content, 80)
    };
    let reject = |reason: String| (shown.clone(), reason);
    let kind = match m.get("kind") {
        Some(Value::String(k)) => match Kind::parse(k.trim()) {
            Some(Kind::WorkingSummary) => {
                return Err(reject("kind working_summary is not extractable".into()));
            }
            Some(kind) => kind,
            None => return Err(reject(format!("unknown kind {:?}", clip(k, 40)))),
        },
        Some(_) => return Err(reject("\"kind\" is not a string".into())),
        None => return Err(reject("missing \"kind\"".into())),
    };
    match m.get("content") {
        Some(Value::String(_)) => {}
        Some(_) => return Err(reject("\"content\" is not a string".into())),
        None => return Err(reject("missing \"content\"".into())),
    }
    let chars = content.chars().count();
    if chars < MIN_CONTENT_CHARS {
        return Err(reject("empty content".into()));
    }
    if chars > MAX_CONTENT_CHARS {
        return Err(reject(format!(
            "content is {chars} chars, more than {MAX_CONTENT_CHARS}"
        )));
    }
    Ok(Candidate {
        kind,
        content,
        fact_key: m.get("fact_key").and_then(Value::as_str).and_then(slot),
        importance: unit_number(&m, "importance").unwrap_or(DEFAULT_IMPORTANCE),
        confidence: unit_number(&m, "confidence").unwrap_or(DEFAULT_CONFIDENCE),
        tags: tags(&m),
        source_turn: m.get("source_turn").and_then(Value::as_u64),
    })
}

/// A number (or a numeric string) clamped to 0..=1; anything else is "not given".
fn unit_number(m: &Map<String, Value>, key: &str) -> Option<f32> {
    let n = match m.get(key)? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    n.is_finite().then(|| n.clamp(0.0, 1.0) as f32)
}

/// Lowercase, trimmed, deduplicated, at most 8 of at most 32 chars; a comma-separated string
/// is accepted too, non-strings are dropped.
fn tags(m: &Map<String, Value>) -> Vec<String> {
    let raw: Vec<String> = match m.get("tags") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(Value::String(s)) => s.split(',').map(str::to_string).collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<String> = Vec::new();
    for t in raw {
        let t = clip(&t.to_lowercase(), MAX_TAG_CHARS)
            .trim_end_matches('…')
            .to_string();
        if !t.is_empty() && !out.contains(&t) && out.len() < MAX_TAGS {
            out.push(t);
        }
    }
    out
}
