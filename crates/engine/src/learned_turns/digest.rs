//! Recorded turns as the learning jobs read them: what the user asked (agent metadata and
//! MetaClaw's own block stripped, so injected skills never feed back into new ones), what the
//! assistant answered (stripped too: a model may quote the block back), and the tool errors
//! it ran into. A tool round trip is several recorded turns for one request of the user's;
//! they are read as one, so the user's words reach the learning model once.

use metaclaw_skills::evolve::TurnDigest;
use metaclaw_store::TurnRow;
use metaclaw_wire::reader::{self, content_text, own_words};
use serde_json::Value;

/// Tool output worth showing as an error is cut to this many characters.
const TOOL_ERROR_CHARS: usize = 400;

/// The turns in order, each with the row where the user spoke. A turn that only carries tool
/// results for the turn before it (the same words, then the assistant's call and the
/// results) is folded into that one: its answer and tool errors join the earlier turn's.
pub fn digests(rows: &[TurnRow]) -> Vec<(&TurnRow, TurnDigest)> {
    let mut out: Vec<(&TurnRow, TurnDigest)> = Vec::new();
    for row in rows {
        let Some((d, continues)) = read(row) else {
            continue;
        };
        match out.last_mut() {
            Some((_, before)) if continues && before.user == d.user => {
                if !d.assistant.is_empty() {
                    if !before.assistant.is_empty() {
                        before.assistant.push('\n');
                    }
                    before.assistant.push_str(&d.assistant);
                }
                before.tool_errors.extend(d.tool_errors);
            }
            _ => out.push((row, d)),
        }
    }
    out
}

/// One turn, and whether it continues the user's request after a tool call (an assistant
/// message follows the user's newest words).
fn read(turn: &TurnRow) -> Option<(TurnDigest, bool)> {
    let request: Value = serde_json::from_str(&turn.request_json).ok()?;
    let newest_user = reader::user_turns(request.as_object()?).last()?.index;
    let messages = request.get("messages")?.as_array()?;
    let user = own_words(&content_text(messages[newest_user].get("content")));
    if user.is_empty() {
        return None;
    }
    let continues = messages[newest_user + 1..]
        .iter()
        .any(|m| m.get("role").and_then(Value::as_str) == Some("assistant"));
    let tool_errors = messages[newest_user..]
        .iter()
        .flat_map(tool_outputs)
        .filter(|(text, flagged)| *flagged || looks_like_error(text))
        .map(|(text, _)| text.chars().take(TOOL_ERROR_CHARS).collect())
        .collect();
    let assistant = turn
        .reply_json
        .as_deref()
        .and_then(|r| serde_json::from_str::<Value>(r).ok())
        .map(|r| own_words(&reply_text(&r)))
        .unwrap_or_default();
    let d = TurnDigest {
        user,
        assistant,
        tool_errors,
        score: None,
    };
    Some((d, continues))
}

/// Tool results in either protocol, with whether the tool itself flagged an error.
fn tool_outputs(m: &Value) -> Vec<(String, bool)> {
    match m.get("role").and_then(Value::as_str) {
        Some("tool") => vec![(any_text(m.get("content")), false)],
        Some("user") => m
            .get("content")
            .and_then(Value::as_array)
            .map(|parts| {
                parts
                    .iter()
                    .filter(|p| p.get("type").and_then(Value::as_str) == Some("tool_result"))
                    .map(|p| {
                        let flagged = p.get("is_error").and_then(Value::as_bool) == Some(true);
                        (any_text(p.get("content")), flagged)
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn any_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn looks_like_error(text: &str) -> bool {
    let lower = text.to_lowercase();
    [
        "error",
        "exception",
        "traceback",
        "failed",
        "not found",
        "denied",
        "panicked",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// The assistant's reply in either protocol: its text, and the tools it called by name.
fn reply_text(reply: &Value) -> String {
    let mut out = Vec::new();
    if let Some(message) = reply.pointer("/choices/0/message") {
        if let Some(text) = message.get("content").and_then(Value::as_str) {
            out.push(text.to_string());
        }
        for call in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                let args = call
                    .pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                out.push(format!("[called tool {name}({args})]"));
            }
        }
    }
    for block in reply
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    out.push(t.to_string());
                }
            }
            Some("tool_use") => {
                let name = block.get("name").and_then(Value::as_str).unwrap_or("?");
                let input = block.get("input").map(Value::to_string).unwrap_or_default();
                out.push(format!("[called tool {name}({input})]"));
            }
            _ => {}
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaclaw_store::TurnId;
    use serde_json::json;

    fn row(request: Value, reply: Value) -> TurnRow {
        TurnRow {
            id: TurnId(1),
            session_id: "s".into(),
            turn_index: 0,
            turn_type: "main".into(),
            scope: "default".into(),
            client_protocol: "openai".into(),
            upstream_protocol: "openai".into(),
            upstream: "primary".into(),
            model: "m".into(),
            request_json: request.to_string(),
            reply_json: Some(reply.to_string()),
            status: 200,
            error: None,
            input_tokens: None,
            output_tokens: None,
            overhead_ms: 0.0,
            ttft_ms: None,
            total_ms: 1.0,
            skill_generation: 1,
            created_at_ms: 0,
            injected_skills: vec![],
        }
    }

    #[test]
    fn strips_the_injected_block_and_keeps_tool_errors() {
        let t = row(
            json!({"messages":[
                {"role":"user","content":"fix the build\n\n<metaclaw-context>\n## Skills\nstuff\n</metaclaw-context>"},
                {"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"sh","arguments":"{}"}}]},
                {"role":"tool","tool_call_id":"c","content":"error: cannot find crate `foo`"},
                {"role":"tool","tool_call_id":"d","content":"all good"}]}),
            json!({"choices":[{"message":{"role":"assistant","content":"Added the dependency."}}]}),
        );
        let d = one(&t);
        assert_eq!(d.user, "fix the build");
        assert_eq!(d.tool_errors, vec!["error: cannot find crate `foo`"]);
        assert_eq!(d.assistant, "Added the dependency.");
    }

    #[test]
    fn anthropic_shapes() {
        let t = row(
            json!({"messages":[
                {"role":"user","content":[{"type":"text","text":"deploy it"}]},
                {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"sh","input":{}}]},
                {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":"exit 1"}]}]}),
            json!({"content":[{"type":"text","text":"Retrying."},{"type":"tool_use","name":"sh","input":{"cmd":"make"}}]}),
        );
        let d = one(&t);
        assert_eq!(d.user, "deploy it");
        assert_eq!(d.tool_errors, vec!["exit 1"]);
        assert!(d.assistant.starts_with("Retrying.\n[called tool sh("));
        assert!(digests(&[row(json!({"messages":[]}), json!({}))]).is_empty());
    }

    fn one(t: &TurnRow) -> TurnDigest {
        let mut all = digests(std::slice::from_ref(t));
        assert_eq!(all.len(), 1);
        all.remove(0).1
    }

    #[test]
    fn a_tool_round_trip_is_read_as_one_turn_with_the_users_words_once() {
        let ask = json!({"role":"user","content":"read notes.txt and tell me the deadline"});
        let call = json!({"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"read","arguments":"{\"path\":\"notes.txt\"}"}}]});
        let result = json!({"role":"tool","tool_call_id":"c","content":"permission denied"});
        let mut first = row(
            json!({"messages":[ask]}),
            json!({"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"read","arguments":"{}"}}]}}]}),
        );
        first.turn_index = 0;
        let mut second = row(
            json!({"messages":[ask, call, result]}),
            json!({"choices":[{"message":{"role":"assistant","content":"I could not read it."}}]}),
        );
        second.turn_index = 1;
        let mut next = row(
            json!({"messages":[ask, call, result,
                {"role":"assistant","content":"I could not read it."},
                {"role":"user","content":"never mind"}]}),
            json!({"choices":[{"message":{"role":"assistant","content":"OK."}}]}),
        );
        next.turn_index = 2;
        let rows = [first, second, next];
        let all = digests(&rows);
        assert_eq!(all.len(), 2, "{all:?}");
        let (row, d) = &all[0];
        assert_eq!(row.turn_index, 0, "the row where the user spoke");
        assert_eq!(d.user, "read notes.txt and tell me the deadline");
        assert!(
            d.assistant.starts_with("[called tool read("),
            "{}",
            d.assistant
        );
        assert!(
            d.assistant.ends_with("\nI could not read it."),
            "{}",
            d.assistant
        );
        assert_eq!(d.tool_errors, vec!["permission denied"]);
        assert_eq!(all[1].1.user, "never mind");
    }
}
