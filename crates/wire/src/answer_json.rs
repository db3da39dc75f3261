//! Finding the JSON in a model's free-text answer.
//!
//! Models wrap JSON in fences, add prose around it, or answer with a bare array despite the
//! schema. Instead of stripping fences (which would also strip fences inside string values)
//! or cutting from the first `[` to the last `]` (which breaks on prose such as "see [1]"),
//! each `{` or `[` is tried in turn as the start of a JSON value, parsed by a streaming
//! deserializer that stops at the value's end, and the first value the caller accepts wins.

use serde_json::{Deserializer, Value};

/// The first complete JSON object or array in `text` that `accept` turns into `Some`.
///
/// A value that parses but is not accepted is skipped whole: the arrays and objects inside it
/// are not tried on their own (an answer `{"memories": [...], "skills": []}` holds no skills,
/// even though its `memories` list is an array of objects).
pub fn first_value<T>(text: &str, mut accept: impl FnMut(Value) -> Option<T>) -> Option<T> {
    let mut resume = 0;
    for (i, c) in text.char_indices() {
        if i < resume || (c != '{' && c != '[') {
            continue;
        }
        let mut values = Deserializer::from_str(&text[i..]).into_iter::<Value>();
        let Some(Ok(value)) = values.next() else {
            continue;
        };
        resume = i + values.byte_offset();
        if let Some(found) = accept(value) {
            return Some(found);
        }
    }
    None
}

/// The items of the first `{"<key>": [...]}` object or bare array of objects in `text`.
/// `{"<key>": null}` and empty lists count as an empty answer only when nothing better
/// follows, so a stray `[]` in prose cannot hide the real answer. `None`: no such value.
pub fn find_items(text: &str, key: &str) -> Option<Vec<Value>> {
    let mut saw_empty = false;
    let found = first_value(text, |value| match items_of(value, key) {
        Some(items) if items.is_empty() => {
            saw_empty = true;
            None
        }
        other => other,
    });
    found.or_else(|| saw_empty.then(Vec::new))
}

fn items_of(value: Value, key: &str) -> Option<Vec<Value>> {
    match value {
        Value::Object(mut m) => match m.remove(key) {
            Some(Value::Array(items)) => Some(items),
            Some(Value::Null) => Some(Vec::new()),
            _ => None,
        },
        // `[1]` in prose is not a list of items.
        Value::Array(items) if items.is_empty() || items.iter().any(Value::is_object) => {
            Some(items)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_well_shaped_value_wins() {
        let t = r#"Per [1] and {"x": 2}: [] then {"skills": [{"name": "a"}]}"#;
        assert_eq!(find_items(t, "skills").unwrap().len(), 1);
        assert_eq!(find_items("none: []", "skills").unwrap().len(), 0);
        assert_eq!(
            find_items(r#"{"skills": null}"#, "skills").unwrap().len(),
            0
        );
        assert!(find_items("[1, 2] {\"a\": 1}", "skills").is_none());
        assert!(find_items("no json here", "skills").is_none());
    }

    #[test]
    fn fences_and_prose_and_multibyte() {
        let t = "Voilà — 好的:\n```json\n{\"memories\": [{\"k\": \"é\"}]}\n```\nfin";
        assert_eq!(find_items(t, "memories").unwrap().len(), 1);
        // A truncated value is skipped, the complete one after it is found.
        let t = "{\"memories\": [{\"a\": 1} ... {\"memories\": [{\"b\": 2}]}";
        assert_eq!(find_items(t, "memories").unwrap()[0]["b"], 2);
    }

    #[test]
    fn lists_inside_an_answer_for_another_key_are_not_items() {
        let t = r#"{"memories": [{"kind": "preference", "content": "Celsius"}], "skills": []}"#;
        assert_eq!(find_items(t, "skills"), Some(vec![]));
        assert_eq!(find_items(t, "memories").unwrap().len(), 1);
        let t = r#"```json
{"memories": [{"content": "x"}]}
```"#;
        assert_eq!(find_items(t, "skills"), None);
    }

    #[test]
    fn first_value_is_generic() {
        let n = first_value(r#"x {"a": 1} {"n": 7}"#, |v| {
            v.get("n").and_then(Value::as_u64)
        });
        assert_eq!(n, Some(7));
    }
}
