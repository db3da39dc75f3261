//! `metaclaw hook claude-code` as Claude Code runs it: the hook's JSON on stdin, the running
//! engine found through the home's run files. A turn read from a transcript is recorded with
//! the user's words and the tools used, the session's end makes MetaClaw learn, and the next
//! session's prompt gets the block as `additionalContext`. With MetaClaw stopped, or input
//! that is not Claude Code's, the hook exits 0 with nothing on stdout and one stderr line.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::process::Output;
use std::time::{Duration, Instant};

use common::daemon::{Home, free_port, stdout};
use serde_json::{Value, json};

const RULE: &str = "From now on, always write dates as YYYY-MM-DD.";

/// Lines as Claude Code 2.1 writes them: the prompt, a tool call, its result (a `user`
/// entry that is not the user's words), the answer, and bookkeeping around them.
fn transcript() -> String {
    [
        json!({"type": "queue-operation", "operation": "enqueue", "content": RULE}),
        json!({"type": "user", "message": {"role": "user", "content": RULE}, "promptId": "p1"}),
        json!({"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["x"]}}),
        json!({"type": "assistant", "message": {"model": "claude-x", "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "date"}}]}}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": "toolu_1", "content": "Sun Dec  6"}]}, "toolUseResult": {"stdout": "Sun Dec  6"}}),
        json!({"type": "assistant", "message": {"model": "claude-x", "role": "assistant",
            "content": [{"type": "text", "text": "Understood: dates as YYYY-MM-DD."}]}}),
        json!({"type": "system", "subtype": "stop_hook_summary"}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect()
}

fn hook(home: &Home, input: &Value) -> Output {
    let o = home.run_with_stdin(&["hook", "claude-code"], &input.to_string());
    assert!(o.status.success(), "{o:?}");
    o
}

fn stderr_lines(o: &Output) -> usize {
    String::from_utf8_lossy(&o.stderr).lines().count()
}

async fn admin(home: &Home, port: u16, path: &str) -> Value {
    reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}{path}"))
        .bearer_auth(home.admin_token())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[test]
fn without_metaclaw_or_with_bad_input_the_hook_stays_out_of_the_way() {
    let home = Home::new("");
    let prompt = json!({"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    for input in [prompt.to_string(), "not json".to_owned(), "{}".to_owned()] {
        let o = home.run_with_stdin(&["hook", "claude-code"], &input);
        assert!(o.status.success(), "{input}: {o:?}");
        assert!(o.stdout.is_empty(), "{input}: {o:?}");
        assert_eq!(stderr_lines(&o), 1, "{input}: {o:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_told_by_the_hooks_comes_back_in_the_next_sessions_context() {
    let port = free_port();
    let home = Home::new(&format!(
        "skills:\n  enabled: false\nproxy:\n  port: {port}\n"
    ));
    home.start_daemon().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s1.jsonl");
    std::fs::write(&path, transcript()).unwrap();

    // Session one: nothing learned yet, so no context; the turn; the end.
    let o = hook(
        &home,
        &json!({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": RULE,
                "transcript_path": path, "cwd": "/tmp"}),
    );
    assert!(o.stdout.is_empty(), "{o:?}");
    let o = hook(
        &home,
        &json!({"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": false,
                "transcript_path": path, "last_assistant_message": "Understood."}),
    );
    assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{o:?}");
    hook(
        &home,
        &json!({"session_id": "s1", "hook_event_name": "SessionEnd", "reason": "other"}),
    );

    let turns = admin(&home, port, "/api/turns?session=s1").await;
    let turns = turns["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{turns:?}");
    assert_eq!(turns[0]["upstream"], "plugin:claude-code");
    let request = turns[0]["request_json"].as_str().unwrap();
    assert!(
        request.contains(RULE) && !request.contains("Sun Dec"),
        "{request}"
    );
    let reply = turns[0]["reply_json"].as_str().unwrap();
    assert!(
        reply.contains("\"Bash\"") && reply.contains("dates as YYYY-MM-DD"),
        "{reply}"
    );

    let deadline = Instant::now() + Duration::from_secs(30);
    while admin(&home, port, "/api/memory").await["total"].as_u64() == Some(0) {
        assert!(Instant::now() < deadline, "nothing learned");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Session two, sharing no word with the rule: the block, as Claude Code takes it.
    let o = hook(
        &home,
        &json!({"session_id": "s2", "hook_event_name": "UserPromptSubmit",
                "prompt": "When did the last release go out?"}),
    );
    let out: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        out["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.starts_with("<metaclaw-context>"), "{context}");
    assert!(context.contains("YYYY-MM-DD"), "{context}");
}
