//! Tool-call arguments, tool-call id matching and image URLs.

use serde_json::{Map, Value};

use crate::openai;

/// Key under which arguments that are not valid JSON are kept, so nothing is lost.
pub(crate) const RAW_KEY: &str = "_raw";

/// OpenAI `arguments` string → Anthropic `input` object.
pub(crate) fn arguments_to_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => raw_input(arguments),
    }
}

pub(crate) fn raw_input(raw: &str) -> Value {
    let mut m = Map::with_capacity(1);
    m.insert(RAW_KEY.to_owned(), Value::String(raw.to_owned()));
    Value::Object(m)
}

/// Anthropic `input` → OpenAI `arguments`; a `{"_raw": s}` input gives back `s`.
pub(crate) fn input_to_arguments(input: &Value) -> String {
    match input {
        Value::Object(m) if m.len() == 1 => match m.get(RAW_KEY) {
            Some(Value::String(s)) => s.clone(),
            _ => input.to_string(),
        },
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}

/// Tool-use ids of the latest assistant turn still waiting for their result.
#[derive(Default)]
pub(crate) struct PendingToolUses {
    ids: Vec<String>,
    answered: Vec<bool>,
}

impl PendingToolUses {
    pub(crate) fn push(&mut self, id: String) {
        self.ids.push(id);
        self.answered.push(false);
    }

    /// Claims the pending id a tool result refers to. Clients rewrite ids (`call_abc` →
    /// `callabc`), so after an exact match comes a match on ASCII alphanumerics only, then
    /// the first unanswered call by position.
    pub(crate) fn claim(&mut self, id: &str) -> Option<String> {
        let open = |i: &usize| !self.answered[*i];
        let found = (0..self.ids.len())
            .filter(open)
            .find(|&i| self.ids[i] == id)
            .or_else(|| {
                let want = normalise(id);
                (0..self.ids.len())
                    .filter(open)
                    .find(|&i| !want.is_empty() && normalise(&self.ids[i]) == want)
            })
            .or_else(|| (0..self.ids.len()).find(open))?;
        self.answered[found] = true;
        Some(self.ids[found].clone())
    }

    /// Ids that never got a result; clears the set.
    pub(crate) fn take_unanswered(&mut self) -> Vec<String> {
        let ids = std::mem::take(&mut self.ids);
        let answered = std::mem::take(&mut self.answered);
        ids.into_iter()
            .zip(answered)
            .filter_map(|(id, done)| (!done).then_some(id))
            .collect()
    }
}

fn normalise(id: &str) -> String {
    id.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// Splits `data:<media type>;base64,<data>` into media type and data.
pub(crate) fn parse_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    let media = meta.strip_suffix(";base64")?;
    Some((media, data))
}

/// An Anthropic `tool_use` as an OpenAI tool call.
pub(crate) fn tool_call(id: String, name: String, input: &Value) -> openai::ToolCall {
    openai::ToolCall {
        id,
        kind: "function".to_owned(),
        function: openai::FunctionCall {
            name,
            arguments: input_to_arguments(input),
            extra: Map::new(),
        },
        extra: Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_mapping() {
        assert_eq!(arguments_to_input(r#"{"a":1}"#), json!({"a":1}));
        assert_eq!(arguments_to_input(""), json!({}));
        assert_eq!(arguments_to_input("{oops"), json!({"_raw":"{oops"}));
        assert_eq!(arguments_to_input("[1]"), json!({"_raw":"[1]"}));
        assert_eq!(input_to_arguments(&json!({"_raw":"{oops"})), "{oops");
        assert_eq!(input_to_arguments(&json!({"a":1})), r#"{"a":1}"#);
        assert_eq!(input_to_arguments(&Value::Null), "{}");
    }

    #[test]
    fn claim_exact_then_normalised_then_position() {
        let mut p = PendingToolUses::default();
        p.push("call_abc".into());
        p.push("call_def".into());
        p.push("call_xyz".into());
        assert_eq!(p.claim("call_def").as_deref(), Some("call_def"));
        assert_eq!(p.claim("callabc").as_deref(), Some("call_abc"));
        assert_eq!(p.claim("something-else").as_deref(), Some("call_xyz"));
        assert_eq!(p.claim("call_abc"), None);
        assert!(p.take_unanswered().is_empty());
    }

    #[test]
    fn unanswered_are_reported() {
        let mut p = PendingToolUses::default();
        p.push("a".into());
        p.push("b".into());
        assert_eq!(p.claim("b").as_deref(), Some("b"));
        assert_eq!(p.take_unanswered(), vec!["a".to_owned()]);
        assert_eq!(p.claim("a"), None);
    }

    #[test]
    fn data_urls() {
        assert_eq!(
            parse_data_url("data:image/png;base64,AAAA"),
            Some(("image/png", "AAAA"))
        );
        assert_eq!(parse_data_url("https://x/y.png"), None);
        assert_eq!(parse_data_url("data:image/png,AAAA"), None);
    }
}
