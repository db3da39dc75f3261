//! The frontmatter's shape. The Agent Skills specification allows six keys: `name`,
//! `description`, `license`, `compatibility`, `allowed-tools`, and `metadata`, a map of
//! strings. MetaClaw keeps its own fields in `metadata` under a `metaclaw-` prefix; a list
//! becomes one string: tags comma-separated (people edit them), sessions and requests as a
//! JSON array (free text, which may hold any character).
//!
//! Files written before that had MetaClaw's fields at the top level (`category`, `tags`
//! as a flow list, `source`, `provenance`); they still load, and `migrate` rewrites them.

use serde_yaml_ng::Value;

/// The top-level keys of the earlier format, now under `metadata`.
pub(crate) const LEGACY_KEYS: &[&str] = &[
    "category",
    "tags",
    "always",
    "disabled",
    "source",
    "provenance",
];

pub(crate) const CATEGORY: &str = "metaclaw-category";
pub(crate) const TAGS: &str = "metaclaw-tags";
pub(crate) const ALWAYS: &str = "metaclaw-always";
pub(crate) const DISABLED: &str = "metaclaw-disabled";
pub(crate) const SOURCE: &str = "metaclaw-source";
pub(crate) const SESSIONS: &str = "metaclaw-sessions";
pub(crate) const CREATED_AT: &str = "metaclaw-created-at";
pub(crate) const MODEL: &str = "metaclaw-model";
pub(crate) const IMPROVES: &str = "metaclaw-improves";
pub(crate) const GENERATION: &str = "metaclaw-generation";
pub(crate) const ORIGIN: &str = "metaclaw-origin";
pub(crate) const REQUESTS: &str = "metaclaw-requests";

/// The keys of a learned, imported or team skill's provenance.
pub(crate) const PROVENANCE: &[&str] = &[
    SESSIONS, CREATED_AT, MODEL, IMPROVES, GENERATION, ORIGIN, REQUESTS,
];

/// Every `metadata` key MetaClaw reads, in the order it writes them.
pub(crate) const OURS: &[&str] = &[
    CATEGORY, TAGS, ALWAYS, DISABLED, SOURCE, SESSIONS, CREATED_AT, MODEL, IMPROVES, GENERATION,
    ORIGIN, REQUESTS,
];

/// Tags as one string: `a, b, c`.
pub(crate) fn join_tags(tags: &[String]) -> String {
    tags.join(", ")
}

/// A comma-separated string as trimmed, non-empty tags.
pub(crate) fn split_tags(text: &str) -> Vec<String> {
    text.split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Free-text items as one JSON array string. A `---` inside is written as `\u002d--`, so
/// no reader that cuts the file at the first `---` can take it for the frontmatter's end.
pub(crate) fn join_list(items: &[String]) -> String {
    serde_json::to_string(items)
        .unwrap_or_default()
        .replace("---", "\\u002d--")
}

/// The items of a JSON array string.
pub(crate) fn split_list(text: &str) -> Result<Vec<String>, String> {
    serde_json::from_str(text).map_err(|e| format!("expected a JSON array of strings: {e}"))
}

/// A YAML value as the string the specification wants: scalars as written, a nested list
/// or map (another tool's structured metadata) as JSON, so nothing in it is lost.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => String::new(),
        Value::Tagged(t) => text_of(&t.value),
        // JSON has only string keys; YAML text keeps any other kind.
        Value::Sequence(_) | Value::Mapping(_) => serde_json::to_string(&value)
            .or_else(|_| serde_yaml_ng::to_string(&value))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_round_trip_through_one_string() {
        let items = vec!["a, b".to_string(), "x --- y\n\"q\"".to_string()];
        let text = join_list(&items);
        assert!(!text.contains("---") && !text.contains('\n'), "{text}");
        assert_eq!(split_list(&text).unwrap(), items);
        assert_eq!(split_tags(" a, b ,,c "), ["a", "b", "c"]);
        assert!(split_list("a, b").is_err());
    }

    #[test]
    fn nested_metadata_becomes_json() {
        let v: Value = serde_yaml_ng::from_str("requires:\n  bins: [curl]\n").unwrap();
        assert_eq!(text_of(&v), r#"{"requires":{"bins":["curl"]}}"#);
        assert_eq!(text_of(&Value::from(1.5)), "1.5");
    }
}
