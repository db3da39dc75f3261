//! Labels recorded turns with what followed them, behind a mark in `state`, a page at a time.
//!
//! Only turns whose newest message is the user's own words count: a tool round in between
//! is the agent at work, not the user answering. Turn k of a session is labelled when the
//! user's next message (turn k+1) arrives; the newest one waits for its successor. The same
//! message sent again at the same place (an agent's retry after an error or a timeout) is
//! not the user speaking: the earlier turn is labelled `retry`, and the user's next message
//! labels the resent one.

use std::collections::HashMap;

use metaclaw_store::{LabelTurn, Store, StoreError, TurnId};
use serde_json::{Map, Value};

use super::follow_up::follow_up;

/// The id of the last main turn a pass has looked at.
pub const MARK: &str = "effect.labelled_through";
/// Main turns read per page.
const PAGE: usize = 500;
/// Earlier turns of a session searched for its previous message from the user.
const LOOK_BACK: usize = 50;
/// The label of a turn whose message was sent again unchanged.
const RETRY: &str = "retry";

/// The user's newest message in a request: where it is and what it says.
#[derive(Debug, PartialEq, Eq)]
struct Said {
    index: usize,
    words: String,
}

/// Labels the turns recorded since the last call, at most `pages` pages; returns how many
/// turns were labelled. Blocking (SQLite).
pub fn label_new_turns(store: &mut Store, pages: usize) -> Result<usize, StoreError> {
    let mut mark = store
        .state_get(MARK)?
        .and_then(|v| v.parse::<i64>().ok())
        .map_or(TurnId(0), TurnId);
    let mut latest: HashMap<String, (TurnId, Said)> = HashMap::new();
    let mut labelled = 0;
    for _ in 0..pages {
        let page = store.main_turns_after(mark, PAGE)?;
        let Some(last) = page.last().map(|t| t.id) else {
            break;
        };
        let mut labels: Vec<(TurnId, &'static str)> = Vec::new();
        for turn in &page {
            let Some(said) = user_words(turn) else {
                continue;
            };
            let previous = match latest.remove(&turn.session_id) {
                Some(p) => Some(p),
                None => previous_message(store, &turn.session_id, turn.id)?,
            };
            if let Some((id, before)) = previous {
                let label = if before == said {
                    RETRY
                } else {
                    follow_up(&before.words, &said.words).as_str()
                };
                labels.push((id, label));
            }
            latest.insert(turn.session_id.clone(), (turn.id, said));
        }
        labelled += labels.len();
        store.set_follow_ups(&labels)?;
        store.state_set(MARK, &last.0.to_string())?;
        mark = last;
        if page.len() < PAGE {
            break;
        }
    }
    Ok(labelled)
}

/// The session's newest turn before `before` whose newest message was the user's own.
fn previous_message(
    store: &Store,
    session: &str,
    before: TurnId,
) -> Result<Option<(TurnId, Said)>, StoreError> {
    Ok(store
        .main_turns_before(session, before, LOOK_BACK)?
        .iter()
        .find_map(|t| user_words(t).map(|w| (t.id, w))))
}

/// The user's own words when they spoke since the assistant's last message; `None` for a
/// tool round (the assistant's call and its result came after them) or a request that
/// cannot be read. Agents may put their own messages after the user's (Claude Code's
/// environment reminder): those do not make it a tool round.
fn user_words(turn: &LabelTurn) -> Option<Said> {
    let body: Map<String, Value> = serde_json::from_str(&turn.request_json).ok()?;
    let messages = body.get("messages")?.as_array()?;
    let newest = metaclaw_wire::reader::newest_user_turn(&body)?;
    let answered = messages
        .iter()
        .skip(newest.index + 1)
        .any(|m| m.get("role").and_then(Value::as_str) == Some("assistant"));
    (!answered).then_some(Said {
        index: newest.index,
        words: newest.words,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use metaclaw_store::NewTurn;
    use serde_json::json;

    use super::*;

    fn turn(session: &str, messages: Value) -> NewTurn {
        NewTurn {
            session_id: session.into(),
            turn_type: "main".into(),
            request_json: json!({ "messages": messages }).to_string(),
            status: 200,
            total_ms: 1.0,
            created_at_ms: 1,
            ..NewTurn::default()
        }
    }

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": text})
    }

    fn label_of(store: &Store, id: TurnId) -> Option<String> {
        store.follow_up_of(id).unwrap()
    }

    #[test]
    fn each_message_is_labelled_by_the_next_one_tool_rounds_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let ask = user("[Thu 2026-12-03 17:38 UTC] Convert data.csv to JSON");
        let answer = json!({"role": "assistant", "content": "", "tool_calls": []});
        let tool = json!({"role": "tool", "tool_call_id": "1", "content": "done"});
        let ids = store
            .insert_turns(&[
                turn("s", json!([ask])),
                turn("s", json!([ask, answer, tool])),
                turn("t", json!([user("hello there friend")])),
                turn("s", json!([ask, answer, tool, {"role": "assistant", "content": "ok"}, user("No, I meant data2.csv")])),
            ])
            .unwrap();
        assert_eq!(label_new_turns(&mut store, 10).unwrap(), 1);
        assert_eq!(label_of(&store, ids[0]).as_deref(), Some("correction"));
        assert_eq!(
            label_of(&store, ids[1]),
            None,
            "a tool round is not the user's"
        );
        assert_eq!(label_of(&store, ids[3]), None, "waits for the next message");

        // The next pass starts at the mark and finds the previous message in the database.
        let more = store
            .insert_turns(&[turn("s", json!([user("No, I meant data2.csv"), {"role": "assistant", "content": "done"}, user("Now plot it")]))])
            .unwrap();
        assert_eq!(label_new_turns(&mut store, 10).unwrap(), 1);
        assert_eq!(label_of(&store, ids[3]).as_deref(), Some("continues"));
        assert_eq!(label_of(&store, more[0]), None);
        assert_eq!(label_new_turns(&mut store, 10).unwrap(), 0, "nothing new");
    }

    #[test]
    fn the_same_message_sent_again_is_a_retry_the_same_words_later_a_repeat() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let ask = user("Convert data.csv to JSON please");
        let answer = json!({"role": "assistant", "content": "Done."});
        let ids = store
            .insert_turns(&[
                turn("r", json!([ask])),
                // The agent's retry: the same request again.
                turn("r", json!([ask])),
                // The user asks the same again after the answer.
                turn("r", json!([ask, answer, ask])),
                turn("r", json!([ask, answer, ask, answer, user("Thanks!")])),
            ])
            .unwrap();
        assert_eq!(label_new_turns(&mut store, 10).unwrap(), 3);
        assert_eq!(label_of(&store, ids[0]).as_deref(), Some("retry"));
        assert_eq!(label_of(&store, ids[1]).as_deref(), Some("repeat"));
        assert_eq!(label_of(&store, ids[2]).as_deref(), Some("thanks"));
    }

    #[test]
    fn an_agent_message_after_the_users_words_is_not_a_tool_round() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        // Claude Code's first request: the user's words, then its environment reminder.
        let words = user("From now on, use Celsius.");
        let reminder = user(
            "<system-reminder>\n# Environment\nPrimary working directory: /tmp\n</system-reminder>",
        );
        let answer = json!({"role": "assistant", "content": "Noted."});
        let ids = store
            .insert_turns(&[
                turn("c", json!([words, reminder])),
                turn(
                    "c",
                    json!([words, reminder, answer, user("No, Fahrenheit.")]),
                ),
            ])
            .unwrap();
        assert_eq!(label_new_turns(&mut store, 10).unwrap(), 1);
        assert_eq!(label_of(&store, ids[0]).as_deref(), Some("correction"));
    }
}
