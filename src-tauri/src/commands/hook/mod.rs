//! `metaclaw hook claude-code`: what Claude Code's hooks run when MetaClaw is its plugin
//! (`metaclaw agent connect claude-code --plugin`). It reads the hook's JSON on stdin and asks
//! the running engine's plugin API, with the admin token from the run files:
//!
//! - `UserPromptSubmit`: MetaClaw's block for the prompt, printed as the hook's
//!   `additionalContext`;
//! - `Stop`: the turn just finished, read from the transcript, recorded;
//! - `SessionEnd`: the session ends, so learning runs.
//!
//! Whatever goes wrong (MetaClaw stopped or slow, an error, unreadable input) it exits 0
//! with nothing on stdout and at most one line on stderr: Claude Code then goes on as if
//! the plugin were absent. Nothing it prints on `Stop` can make Claude continue.

mod transcript;

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use metaclaw_engine::paths::Paths;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::admin_client::{self, AdminClient};
use crate::cli::HookAgent;
use crate::exit::Failure;
use crate::output;

/// How long one call to the engine may take: the user is waiting for their prompt.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// The agent name the engine records (`plugin:claude-code` as the turn's upstream).
const AGENT: &str = "claude-code";

/// Longest text sent in one field; the engine refuses more than 1 MiB.
const MAX_TEXT: usize = 512 * 1024;

/// The fields of Claude Code's hook input that are used; the rest is ignored.
#[derive(Debug, Deserialize)]
struct HookInput {
    hook_event_name: String,
    session_id: String,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    transcript_path: Option<PathBuf>,
    #[serde(default)]
    stop_hook_active: bool,
    /// The reply's text as Claude Code holds it (2.1 sends it on `Stop`): used when the
    /// transcript has none.
    #[serde(default)]
    last_assistant_message: Option<String>,
}

pub fn run(agent: HookAgent) {
    match agent {
        HookAgent::ClaudeCode => {
            if let Err(f) = claude_code() {
                output::error(format!("metaclaw hook: {}", f.message));
            }
        }
    }
}

fn claude_code() -> Result<(), Failure> {
    let mut raw = String::new();
    std::io::stdin().read_to_string(&mut raw)?;
    let input: HookInput = serde_json::from_str(&raw).map_err(|e| {
        Failure::error(format!(
            "the hook's input is not what Claude Code sends: {e}"
        ))
    })?;
    let Some(call) = call_for(&input)? else {
        return Ok(());
    };
    let paths = Paths::from_env()?;
    let client = AdminClient::connect(&paths)?;
    let runtime = admin_client::runtime()?;
    let answer = runtime.block_on(client.post_json_within(call.path, &call.body, CALL_TIMEOUT))?;
    if input.hook_event_name == "UserPromptSubmit"
        && let Some(block) = answer["block"].as_str().filter(|b| !b.is_empty())
    {
        output::line(json!({
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": block,
            }
        }));
    }
    Ok(())
}

struct Call {
    path: &'static str,
    body: Value,
}

/// The plugin API call for this event; `None` when there is nothing to tell MetaClaw.
fn call_for(input: &HookInput) -> Result<Option<Call>, Failure> {
    let session = &input.session_id;
    Ok(match input.hook_event_name.as_str() {
        "UserPromptSubmit" => input
            .prompt
            .as_deref()
            .filter(|p| !p.trim().is_empty())
            .map(|prompt| Call {
                path: "/api/plugin/context",
                body: json!({"session_id": session, "agent": AGENT, "prompt": cut(prompt)}),
            }),
        // A Stop after another hook made Claude go on repeats the turn already recorded.
        "Stop" if input.stop_hook_active => None,
        "Stop" => {
            let Some(path) = &input.transcript_path else {
                return Err(Failure::error("Stop came without a transcript_path"));
            };
            let text = transcript::read_tail(path).map_err(|e| {
                Failure::error(format!(
                    "cannot read the transcript {}: {e}",
                    path.display()
                ))
            })?;
            transcript::last_turn(&text).map(|mut turn| {
                if turn.assistant.is_empty() {
                    turn.assistant = input.last_assistant_message.clone().unwrap_or_default();
                }
                Call {
                    path: "/api/plugin/turn",
                    body: json!({
                        "session_id": session,
                        "agent": AGENT,
                        "user": cut(&turn.user),
                        "assistant": cut(&turn.assistant),
                        "model": turn.model,
                        "tools": turn.tools,
                    }),
                }
            })
        }
        "SessionEnd" => Some(Call {
            path: "/api/plugin/session_end",
            body: json!({"session_id": session}),
        }),
        _ => None,
    })
}

/// `text` within [`MAX_TEXT`] bytes, cut at a character boundary.
fn cut(text: &str) -> &str {
    if text.len() <= MAX_TEXT {
        return text;
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn input(json: Value) -> HookInput {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn each_event_asks_its_route() {
        let prompt = input(json!({
            "session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "hello",
            "transcript_path": "/nowhere", "cwd": "/tmp", "prompt_id": "p"
        }));
        let call = call_for(&prompt).unwrap().unwrap();
        assert_eq!(call.path, "/api/plugin/context");
        assert_eq!(call.body["agent"], "claude-code");
        assert_eq!(call.body["prompt"], "hello");

        let end =
            input(json!({"session_id": "s1", "hook_event_name": "SessionEnd", "reason": "other"}));
        assert_eq!(
            call_for(&end).unwrap().unwrap().path,
            "/api/plugin/session_end"
        );

        let blank = input(
            json!({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": " "}),
        );
        assert!(call_for(&blank).unwrap().is_none());
        let other = input(json!({"session_id": "s1", "hook_event_name": "PreToolUse"}));
        assert!(call_for(&other).unwrap().is_none());
    }

    #[test]
    fn stop_records_the_transcripts_last_turn_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(
            &path,
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"From now on, be brief.\"}}\n\
             {\"type\":\"assistant\",\"message\":{\"model\":\"m\",\"role\":\"assistant\",\"content\":[]}}\n",
        )
        .unwrap();
        let stop = |active: bool| {
            input(json!({
                "session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": active,
                "transcript_path": path, "last_assistant_message": "Noted."
            }))
        };
        let call = call_for(&stop(false)).unwrap().unwrap();
        assert_eq!(call.path, "/api/plugin/turn");
        assert_eq!(call.body["user"], "From now on, be brief.");
        assert_eq!(call.body["assistant"], "Noted.");
        assert_eq!(call.body["model"], "m");
        assert!(call_for(&stop(true)).unwrap().is_none());
    }

    #[test]
    fn long_text_is_cut_on_a_character() {
        let text = "é".repeat(MAX_TEXT);
        let c = cut(&text);
        assert!(c.len() <= MAX_TEXT && c.chars().all(|ch| ch == 'é'));
    }
}
