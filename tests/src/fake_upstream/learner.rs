//! The fake's small deterministic "model" for learning scenarios.
//!
//! - Asked for structured output named `skills` (the skill evolver) or `memories` (the memory
//!   extractor), it turns every sentence of the prompt that starts with "From now on" into a
//!   skill or a memory holding that rule: a model that learns exactly what the user stated.
//! - A registered [`Task`] makes it answer a question correctly only when the prompt carries
//!   the rule the answer depends on, the way a real model does when given (or not given)
//!   the context.

use serde_json::{Value, json};

/// A question the fake answers right only with the needed rule in its prompt.
#[derive(Debug, Clone)]
pub struct Task {
    /// Text in the newest user message that selects this task.
    pub asks: String,
    /// Text that must appear somewhere in the request for the right answer.
    pub needs: String,
    pub right: String,
    pub wrong: String,
}

/// What the fake answers a structured-output call while told to answer prose
/// ([`crate::fake_upstream::FakeUpstream::answer_prose_to_structured_output`]).
pub const PROSE: &str = "I'd rather not answer in JSON today. Here are my thoughts instead.";

/// Whether the request asks for JSON: a `response_format`, or the schema spelled out in
/// the prompt (Anthropic, or a server without structured output).
pub fn wants_json(request: &Value, raw: &str) -> bool {
    request.get("response_format").is_some() || raw.contains("Reply with one JSON object only")
}

/// The reply text when the request is a structured-output call or a registered task.
/// `lessons`: read rules the way [`super::lessons`] does (stated or corrected, with the
/// request they apply to), written in that style, instead of only "From now on" sentences.
pub fn answer(
    request: &Value,
    raw: &str,
    newest_user_text: &str,
    tasks: &[Task],
    lessons: Option<super::lessons::Style>,
) -> Option<String> {
    let schema = request
        .pointer("/response_format/json_schema/name")
        .and_then(Value::as_str);
    let read = || super::lessons::read(&super::lessons::prompt_text(request));
    match (schema, lessons) {
        (Some("skills"), Some(style)) => {
            return Some(super::lessons::skills(&read(), style).to_string());
        }
        (Some("memories"), Some(style)) => {
            return Some(super::lessons::memories(&read(), style).to_string());
        }
        (Some("skills"), None) => return Some(skills(&rules(raw)).to_string()),
        (Some("memories"), None) => return Some(memories(&rules(raw)).to_string()),
        _ => {}
    }
    tasks
        .iter()
        .find(|t| newest_user_text.contains(&t.asks))
        .map(|t| {
            if raw.contains(&t.needs) {
                t.right.clone()
            } else {
                t.wrong.clone()
            }
        })
}

/// Sentences starting with "From now on" (case-insensitive), trimmed, deduplicated. The
/// request is searched as raw JSON text, so escaped newlines end sentences too.
fn rules(raw: &str) -> Vec<String> {
    // ASCII lowercasing keeps byte offsets, so positions found in `lower` index `raw`.
    let lower = raw.to_ascii_lowercase();
    let mut out: Vec<String> = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find("from now on") {
        let start = from + i;
        let rest = &raw[start..];
        let end = [
            rest.find('.'),
            rest.find('!'),
            rest.find('"'),
            rest.find("\\n"),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
        let rule = rest[..end].trim().to_string();
        if !out.contains(&rule) {
            out.push(rule);
        }
        from = start + end.max(1);
    }
    out
}

/// The rule's significant words, as an evolver would pick them for a name and tags.
fn keywords(rule: &str) -> Vec<String> {
    rule.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .filter(|w| !["from", "now", "always", "never", "the", "and", "with"].contains(&w.as_str()))
        .collect()
}

fn slug(rule: &str) -> String {
    format!(
        "rule-{}",
        keywords(rule)[..]
            .iter()
            .take(4)
            .cloned()
            .collect::<Vec<_>>()
            .join("-")
    )
}

fn skills(rules: &[String]) -> Value {
    let skills: Vec<Value> = rules
        .iter()
        .map(|rule| {
            json!({
                "name": slug(rule),
                "description": format!("Use when this user's standing rule applies: {rule}."),
                "category": "productivity",
                "tags": keywords(rule).into_iter().take(6).collect::<Vec<_>>(),
                "body": format!("# The user's rule\n\n## When this applies\nWhenever the task touches what the rule is about.\n\n## Steps\n1. {rule}.\n2. Check the answer follows the rule before sending it.\n\n## Anti-patterns\n- Answering in another format than the rule asks for.\n"),
                "improves": null
            })
        })
        .collect();
    json!({ "skills": skills })
}

fn memories(rules: &[String]) -> Value {
    let memories: Vec<Value> = rules
        .iter()
        .map(|rule| {
            json!({
                "kind": "procedural_observation",
                "content": format!("{rule}."),
                "fact_key": format!("workflow:{}", slug(rule)),
                "importance": 0.8,
                "confidence": 0.9,
                "tags": []
            })
        })
        .collect();
    json!({ "memories": memories })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_stated_rules_into_skills_and_memories() {
        let raw = r#"{"messages":[{"role":"user","content":"User: hi. From now on, always write meeting times in ISO 8601 with +08:00.\nThanks"}],"response_format":{"json_schema":{"name":"skills"}}}"#;
        let req: Value = serde_json::from_str(raw).unwrap();
        let out: Value = serde_json::from_str(&answer(&req, raw, "", &[], None).unwrap()).unwrap();
        let body = out["skills"][0]["body"].as_str().unwrap();
        assert!(body.contains("From now on, always write meeting times in ISO 8601 with +08:00"));
        assert_eq!(out["skills"][0]["name"], "rule-write-meeting-times-iso");
        assert_eq!(out["skills"][0]["tags"][1], "meeting");

        let raw = raw.replace("\"skills\"", "\"memories\"");
        let req: Value = serde_json::from_str(&raw).unwrap();
        let out: Value = serde_json::from_str(&answer(&req, &raw, "", &[], None).unwrap()).unwrap();
        assert_eq!(out["memories"][0]["kind"], "procedural_observation");
        assert!(
            out["memories"][0]["content"]
                .as_str()
                .unwrap()
                .contains("+08:00")
        );
    }

    #[test]
    fn tasks_are_right_only_with_the_rule_in_the_prompt() {
        let task = Task {
            asks: "When is the standup".into(),
            needs: "+08:00".into(),
            right: "2026-12-03T09:30:00+08:00".into(),
            wrong: "9:30 am".into(),
        };
        let req = json!({});
        let tasks = [task];
        assert_eq!(
            answer(&req, "... +08:00 ...", "When is the standup?", &tasks, None).as_deref(),
            Some("2026-12-03T09:30:00+08:00")
        );
        assert_eq!(
            answer(&req, "...", "When is the standup?", &tasks, None).as_deref(),
            Some("9:30 am")
        );
        assert_eq!(answer(&req, "...", "hello", &tasks, None), None);
    }
}
