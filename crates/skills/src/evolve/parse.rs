//! Tolerant reading of the evolver's answer.
//!
//! Models wrap JSON in fences, add prose around it, or answer with a bare array despite the
//! schema. `metaclaw_wire::answer_json` tries each `{` or `[` in turn as the start of a JSON
//! value (fences inside skill bodies stay intact, "see [1]" in prose is skipped), and the
//! first `{"skills": [...]}` or array of objects wins.
//! Items are then read one by one, so one malformed item is a rejection, not a lost batch.

use metaclaw_wire::answer_json;
use serde_json::{Map, Value};

/// A skill as the model proposed it, fields as given (checked later by `decide`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proposal {
    pub name: String,
    pub description: String,
    /// Empty when the model gave none.
    pub category: String,
    pub tags: Vec<String>,
    pub body: String,
    pub improves: Option<String>,
}

/// A proposal that will not be written, and why, in words fit for a log or a UI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The proposed name, or `#3` (1-based position) when the item had none.
    pub name: String,
    pub reason: String,
}

impl Rejection {
    pub fn new(name: impl Into<String>, reason: impl Into<String>) -> Rejection {
        Rejection {
            name: name.into(),
            reason: reason.into(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub proposals: Vec<Proposal>,
    pub rejected: Vec<Rejection>,
}

/// The answer held no JSON of the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// Reads `{"skills": [...]}` or a bare array of skill objects, fenced or among prose; the
/// field `content` is accepted for `body`. Empty text is an empty answer.
pub fn parse_proposals(text: &str) -> Result<Parsed, ParseError> {
    if text.trim().is_empty() {
        return Ok(Parsed::default());
    }
    let items = find_items(text).ok_or_else(|| {
        ParseError(format!(
            "no {{\"skills\": [...]}} object or array of skills found in the answer ({} chars)",
            text.chars().count()
        ))
    })?;
    let mut parsed = Parsed::default();
    for (i, item) in items.into_iter().enumerate() {
        match proposal(i, item) {
            Ok(p) => parsed.proposals.push(p),
            Err(r) => parsed.rejected.push(r),
        }
    }
    Ok(parsed)
}

/// The items of the first well-shaped JSON value (see [`metaclaw_wire::answer_json`]).
fn find_items(text: &str) -> Option<Vec<Value>> {
    answer_json::find_items(text, "skills")
}

fn proposal(index: usize, item: Value) -> Result<Proposal, Rejection> {
    let label = format!("#{}", index + 1);
    let Value::Object(m) = item else {
        return Err(Rejection::new(label, "item is not a JSON object"));
    };
    let shown = match m.get("name").and_then(Value::as_str).map(str::trim) {
        Some(n) if !n.is_empty() => n.chars().take(80).collect(),
        _ => label,
    };
    let reject = |reason: String| Rejection::new(shown.clone(), reason);
    let body_key = if m.contains_key("body") {
        "body"
    } else {
        "content"
    };
    Ok(Proposal {
        name: required(&m, "name").map_err(reject)?,
        description: required(&m, "description").map_err(reject)?,
        body: required(&m, body_key).map_err(|e| reject(e.replace("content", "body")))?,
        category: optional(&m, "category")
            .map_err(reject)?
            .unwrap_or_default(),
        tags: tags(&m).map_err(reject)?,
        improves: optional(&m, "improves")
            .map_err(reject)?
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty()),
    })
}

fn required(m: &Map<String, Value>, key: &str) -> Result<String, String> {
    optional(m, key)?.ok_or_else(|| format!("missing \"{key}\""))
}

/// A string field; absent and null are both "not given".
fn optional(m: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("\"{key}\" is not a string")),
    }
}

/// A list of strings, or one comma-separated string; non-string entries are dropped.
fn tags(m: &Map<String, Value>) -> Result<Vec<String>, String> {
    match m.get("tags") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => Ok(a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()),
        Some(Value::String(s)) => Ok(s.split(',').map(str::to_string).collect()),
        Some(_) => Err("\"tags\" is not a list of strings".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_well_shaped_value_wins() {
        let t = r#"Per [1] and {"x": 2}: [] then {"skills": [{"name": "a"}]}"#;
        assert_eq!(find_items(t).unwrap().len(), 1);
        assert_eq!(find_items("none: []").unwrap().len(), 0);
        assert_eq!(find_items(r#"{"skills": null}"#).unwrap().len(), 0);
        assert!(find_items("[1, 2] {\"a\": 1}").is_none());
    }

    #[test]
    fn wrong_types_are_per_item_rejections() {
        let t = r#"[{"name": "a", "description": 3, "body": "b"}, {"description": "d"}, 7]"#;
        let p = parse_proposals(t).unwrap();
        assert!(p.proposals.is_empty());
        assert_eq!(
            p.rejected,
            [
                Rejection::new("a", "\"description\" is not a string"),
                Rejection::new("#2", "missing \"name\""),
                Rejection::new("#3", "item is not a JSON object"),
            ]
        );
    }
}
