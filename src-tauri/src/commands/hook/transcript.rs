//! The last turn of a Claude Code transcript (the JSONL at the hook's `transcript_path`):
//! the user's newest prompt and what the assistant said and ran after it.
//!
//! As Claude Code 2.1 writes it, one JSON object a line, each with a `type`: `user` and
//! `assistant` entries carry the API message under `message` (`content` a string or parts);
//! a tool's result comes back as a `user` entry whose parts are `tool_result`s (with a
//! `toolUseResult` field), not words of the user; hook-added context and reminders are
//! separate `attachment` entries; many other types (`queue-operation`, `api-request`,
//! `last-prompt`, `system`, …) are bookkeeping. One assistant reply may span several entries,
//! one per content block.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

/// The most of the transcript's end that is read: a turn is near the end, and a long
/// session's file must not slow the hook down.
const TAIL_BYTES: u64 = 8 << 20;

#[derive(Debug, Default, PartialEq, Eq)]
pub struct LastTurn {
    pub user: String,
    pub assistant: String,
    /// Tool names in the order first used.
    pub tools: Vec<String>,
    pub model: Option<String>,
}

/// The end of the file at `path`, from the first whole line within [`TAIL_BYTES`].
pub fn read_tail(path: &Path) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(match (start, text.find('\n')) {
        (0, _) => text,
        (_, Some(nl)) => text[nl + 1..].to_owned(),
        (_, None) => String::new(),
    })
}

/// The newest turn in `jsonl`; `None` when there is no prompt of the user's in it.
pub fn last_turn(jsonl: &str) -> Option<LastTurn> {
    let mut after = Vec::new();
    for line in jsonl.lines().rev() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if entry["isSidechain"] == true {
            continue;
        }
        match entry["type"].as_str() {
            Some("assistant") => after.push(entry),
            Some("user") => {
                if let Some(user) = users_words(&entry) {
                    after.reverse();
                    return Some(turn(user, &after));
                }
            }
            _ => {}
        }
    }
    None
}

/// The user's own words in a `user` entry; `None` for a tool's result, Claude Code's own
/// messages (`isMeta`, command echoes) and reminders.
fn users_words(entry: &Value) -> Option<String> {
    if entry["isMeta"] == true || entry.get("toolUseResult").is_some() {
        return None;
    }
    let texts: Vec<&str> = match &entry["message"]["content"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(parts) => {
            if parts.iter().any(|p| p["type"] == "tool_result") {
                return None;
            }
            parts
                .iter()
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str())
                .collect()
        }
        _ => return None,
    };
    let words: Vec<&str> = texts
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty() && !is_envelope(t))
        .collect();
    (!words.is_empty()).then(|| words.join("\n"))
}

/// Text Claude Code writes in the user's place: reminders and slash-command echoes.
fn is_envelope(text: &str) -> bool {
    ["<system-reminder>", "<command-", "<local-command-"]
        .iter()
        .any(|p| text.starts_with(p))
}

fn turn(user: String, assistant: &[Value]) -> LastTurn {
    let mut texts = Vec::new();
    let mut tools: Vec<String> = Vec::new();
    let mut model = None;
    for entry in assistant {
        let message = &entry["message"];
        // Claude Code's own stand-ins (an interrupted or failed request) are not the model's.
        if let Some(m) = message["model"].as_str().filter(|m| *m != "<synthetic>") {
            model = Some(m.to_owned());
        }
        match &message["content"] {
            Value::String(s) => texts.push(s.clone()),
            Value::Array(parts) => {
                for p in parts {
                    match p["type"].as_str() {
                        Some("text") => {
                            texts.extend(p["text"].as_str().map(str::to_owned));
                        }
                        Some("tool_use") => {
                            if let Some(name) = p["name"].as_str()
                                && !tools.iter().any(|t| t == name)
                            {
                                tools.push(name.to_owned());
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let texts: Vec<&str> = texts
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .collect();
    LastTurn {
        user,
        assistant: texts.join("\n\n"),
        tools,
        model,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Lines as Claude Code 2.1.332 wrote them for `claude -p` with one Bash call (trimmed to
    /// the fields read, plus the bookkeeping around them).
    const TRANSCRIPT: &str = r#"{"type":"queue-operation","operation":"enqueue","content":"From now on, use ISO dates."}
{"type":"user","isSidechain":false,"message":{"role":"user","content":"An older question"},"promptId":"p0"}
{"type":"assistant","isSidechain":false,"message":{"model":"claude-x","role":"assistant","content":[{"type":"text","text":"An older answer"}]}}
{"type":"user","isSidechain":false,"message":{"role":"user","content":"From now on, use ISO dates. LISTME please"},"promptId":"p1"}
{"type":"attachment","attachment":{"type":"hook_additional_context","content":["<metaclaw-context>x</metaclaw-context>"]}}
{"type":"api-request-blob","role":"user","content":[{"type":"text","text":"not an entry"}]}
{"type":"assistant","isSidechain":false,"message":{"model":"claude-x","role":"assistant","content":[{"type":"text","text":"Listing."}]}}
{"type":"assistant","isSidechain":false,"message":{"model":"claude-x","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"a.txt","is_error":false}]},"toolUseResult":{"stdout":"a.txt"},"promptId":"p1"}
{"type":"assistant","isSidechain":false,"message":{"model":"claude-x","role":"assistant","content":[{"type":"text","text":"There is a.txt."}]}}
{"type":"system","subtype":"stop_hook_summary"}
{"type":"last-prompt","lastPrompt":"From now on, use ISO dates. LISTME please"}
"#;

    #[test]
    fn the_newest_prompt_and_everything_said_and_run_after_it() {
        let t = last_turn(TRANSCRIPT).unwrap();
        assert_eq!(t.user, "From now on, use ISO dates. LISTME please");
        assert_eq!(t.assistant, "Listing.\n\nThere is a.txt.");
        assert_eq!(t.tools, vec!["Bash".to_owned()]);
        assert_eq!(t.model.as_deref(), Some("claude-x"));
    }

    #[test]
    fn reminders_meta_entries_and_sidechains_are_not_the_users_words() {
        let jsonl = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nstuff\n</system-reminder>"},{"type":"text","text":"the real question"}]}}
{"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: generated by a command"}}
{"type":"user","isSidechain":true,"message":{"role":"user","content":"a subagent's task"}}
{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"No response requested."}]}}
"#;
        let t = last_turn(jsonl).unwrap();
        assert_eq!(t.user, "the real question");
        assert_eq!(t.model, None);
        assert_eq!(t.assistant, "No response requested.");
    }

    #[test]
    fn no_prompt_no_turn() {
        assert_eq!(last_turn(""), None);
        assert_eq!(last_turn("not json\n{\"type\":\"summary\"}\n"), None);
    }

    #[test]
    fn a_long_file_is_read_from_a_whole_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let filler = format!("{{\"type\":\"summary\",\"x\":\"{}\"}}\n", "y".repeat(1000));
        let mut text = filler.repeat((TAIL_BYTES as usize / filler.len()) + 2);
        text.push_str(TRANSCRIPT);
        std::fs::write(&path, &text).unwrap();
        let tail = read_tail(&path).unwrap();
        assert!(tail.len() as u64 <= TAIL_BYTES);
        assert!(tail.starts_with('{'));
        assert_eq!(last_turn(&tail).unwrap().tools, vec!["Bash".to_owned()]);
    }
}
