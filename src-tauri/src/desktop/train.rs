//! Train now, through the engine's own admin API (the same calls the dashboard makes). Until
//! weight training lands this runs the learning MetaClaw has: skill evolution on the latest
//! sessions and memory consolidation. With RL it becomes "start a training step".

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::admin_client::AdminClient;

/// Sessions evolved on per click: the latest ones, where new lessons are.
const SESSIONS: usize = 3;

/// Runs evolution and consolidation now; returns what happened in words (logged).
pub async fn train_now(client: &AdminClient) -> Vec<String> {
    let mut done = vec![];
    match client.get("/api/turns?limit=50").await {
        Ok(turns) => {
            for session in latest_sessions(&turns, SESSIONS) {
                let body = json!({ "session_id": session });
                match client.post_json("/api/skills/evolve", &body).await {
                    Ok(_) => done.push(format!("evolved skills on session {session}")),
                    Err(e) => done.push(format!("skill evolution: {}", e.message)),
                }
            }
        }
        Err(e) => done.push(format!("cannot read recent sessions: {}", e.message)),
    }
    match client.post("/api/memory/consolidate").await {
        Ok(_) => done.push("consolidated memory".into()),
        Err(e) => done.push(format!("memory consolidation: {}", e.message)),
    }
    done
}

/// The distinct session ids of the newest turns (`/api/turns` lists newest first).
fn latest_sessions(turns: &Value, n: usize) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = vec![];
    for turn in turns["turns"].as_array().into_iter().flatten() {
        let Some(id) = turn["session_id"].as_str() else {
            continue;
        };
        if seen.insert(id.to_owned()) {
            out.push(id.to_owned());
            if out.len() == n {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_distinct_sessions_first() {
        let turns = json!({"turns": [
            {"session_id": "c"}, {"session_id": "c"}, {"session_id": "b"},
            {"other": 1}, {"session_id": "a"}, {"session_id": "z"}
        ]});
        assert_eq!(latest_sessions(&turns, 3), vec!["c", "b", "a"]);
        assert!(latest_sessions(&json!({}), 3).is_empty());
    }
}
