use serde_json::{Value, json};

use super::*;

fn body(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[test]
fn openclaw_internal_context_message_stamp_and_metadata_are_not_the_users() {
    let b = body(json!({"messages":[
        {"role":"system","content":"You are a personal assistant. Runtime: agent=main"},
        {"role":"user","content":"[Thu 2026-12-03 17:38 UTC] I prefer temperatures in Celsius, please remember that"},
        {"role":"assistant","content":"Noted."},
        {"role":"user","content":[{"type":"text","text":"Conversation info (untrusted metadata):\n```json\n{\"sender\":\"u1\",\"channel\":\"cli\"}\n```\n\n[Thu 2026-12-03 17:39 UTC] what's the weather tomorrow in Rome?"}]},
        {"role":"user","content":"<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nActive exec sessions: none\nSubagents: delegate-to-subagents available\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"}
    ]}));
    let turns = user_turns(&b);
    assert_eq!(
        turns,
        vec![
            UserTurn {
                index: 1,
                words: "I prefer temperatures in Celsius, please remember that".into()
            },
            UserTurn {
                index: 3,
                words: "what's the weather tomorrow in Rome?".into()
            },
        ]
    );
    let newest = newest_user_turn(&b).unwrap();
    assert_eq!(
        newest.index, 3,
        "the block goes on the user's message, not the envelope"
    );
    assert_eq!(
        newest_user_words(&b),
        "what's the weather tomorrow in Rome?"
    );
}

#[test]
fn claude_code_reminders_and_system_messages_are_not_the_users() {
    let b = body(
        json!({"system":[{"type":"text","text":"You are Claude Code"}],"messages":[
            {"role":"system","content":"# Environment\nWorking directory: /home/u/project\nPlatform: linux"},
            {"role":"user","content":[
                {"type":"text","text":"<system-reminder>\nAs you answer, use this context: CLAUDE.md says use git\n</system-reminder>"},
                {"type":"text","text":"<system-reminder>Today's date is 2026-12-03.</system-reminder>"},
                {"type":"text","text":"what's the weather tomorrow in Rome?","cache_control":{"type":"ephemeral"}}
            ]}
        ]}),
    );
    assert_eq!(
        newest_user_words(&b),
        "what's the weather tomorrow in Rome?"
    );
    assert_eq!(user_turns(&b).len(), 1);
}

#[test]
fn our_own_block_tool_results_and_unknown_text_are_handled() {
    let b = body(json!({"messages":[
        {"role":"user","content":"fix the build\n\n<metaclaw-context>\n## Skills\nstuff\n</metaclaw-context>"},
        {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"bash","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},
        {"role":"user","content":"<some-unknown-wrapper>keep me</some-unknown-wrapper>"}
    ]}));
    let turns = user_turns(&b);
    assert_eq!(turns[0].words, "fix the build");
    // A tool result is not the user's; an unknown wrapper keeps its text (degrades safely).
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].index, 3);
    assert!(turns[1].words.contains("keep me"));
}

#[test]
fn a_request_of_nothing_but_envelopes_has_no_user_words() {
    let b = body(json!({"messages":[
        {"role":"user","content":"<system-reminder>only a reminder</system-reminder>"}
    ]}));
    assert!(newest_user_turn(&b).is_none());
    assert_eq!(newest_user_words(&b), "");
}

#[test]
fn stamps_need_a_weekday_and_a_date() {
    assert_eq!(own_words("[Mon 2026-01-05 09:00 CET] hi"), "hi");
    assert_eq!(own_words("[note] hi"), "[note] hi");
    assert_eq!(own_words("[Mon later] hi"), "[Mon later] hi");
    assert_eq!(own_words("a\n[Fri 2026-12-04 08:00 UTC] b"), "a\nb");
}

#[test]
fn an_unclosed_envelope_runs_to_the_end() {
    assert_eq!(own_words("question\n<system-reminder>half"), "question");
}

#[test]
fn a_huge_message_is_read_from_its_start_and_end() {
    let pasted = "log line\n".repeat(1_000_000);
    let text = format!("[Thu 2026-12-03 17:38 UTC] why does this fail?\n{pasted}the end é");
    let b = body(json!({"messages": [{"role": "user", "content": text}]}));
    let words = newest_user_words(&b);
    assert!(words.len() <= MAX_READ + 64, "{} bytes", words.len());
    assert!(words.starts_with("why does this fail?"), "{}", &words[..40]);
    assert!(words.ends_with("the end é"));
    assert!(words.contains("bytes …]"));
    // The same message read again gives the same words (fingerprints depend on it).
    assert_eq!(newest_user_words(&b), words);

    let parts = json!([{"type": "text", "text": pasted}, {"type": "text", "text": "and this?"}]);
    let b = body(json!({"messages": [{"role": "user", "content": parts}]}));
    let words = newest_user_words(&b);
    assert!(words.len() <= MAX_READ + 64);
    assert!(words.ends_with("and this?"));
}
