//! Train now, through the engine's own admin API (the same calls the dashboard makes): in
//! modes that train weights (rl, madmax) one training step now, as `metaclaw train-step`;
//! otherwise the learning skills_only has, skill evolution on the latest sessions and memory
//! consolidation.

use std::collections::BTreeSet;

use metaclaw_engine::config::Mode;
use serde_json::{Value, json};

use crate::admin_client::AdminClient;
use crate::commands::train;

/// Sessions evolved on per click: the latest ones, where new lessons are.
const SESSIONS: usize = 3;

/// What a click runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    WeightStep,
    SkillsAndMemory,
}

/// Runs the learning of the engine's mode now; returns what happened in words (logged).
pub async fn train_now(client: &AdminClient) -> Vec<String> {
    let learning = client.get("/api/learning").await.ok();
    match path(learning.as_ref()) {
        Path::WeightStep => vec![match train::request(client).await {
            Ok(answer) => answer.words,
            Err(e) => format!("training step: {}", e.message),
        }],
        Path::SkillsAndMemory => skills_and_memory(client).await,
    }
}

/// A weight step when the engine's configured mode trains weights (`mode` of
/// `GET /api/learning`); evolution and consolidation otherwise, or when it cannot be read.
fn path(learning: Option<&Value>) -> Path {
    let mode = learning
        .and_then(|v| serde_json::from_value::<Mode>(v["mode"].clone()).ok())
        .unwrap_or_default();
    if metaclaw_engine::rl::wants_rl(mode) {
        Path::WeightStep
    } else {
        Path::SkillsAndMemory
    }
}

async fn skills_and_memory(client: &AdminClient) -> Vec<String> {
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

    #[test]
    fn weight_modes_step_and_skills_only_evolves() {
        let with = |mode: &str| json!({"mode": mode, "active": true, "state": "ready"});
        assert_eq!(path(Some(&with("rl"))), Path::WeightStep);
        assert_eq!(path(Some(&with("madmax"))), Path::WeightStep);
        assert_eq!(path(Some(&with("skills_only"))), Path::SkillsAndMemory);
        // An engine whose learning view cannot be read gets the learning every mode has.
        assert_eq!(path(None), Path::SkillsAndMemory);
        assert_eq!(path(Some(&json!({"mode": "other"}))), Path::SkillsAndMemory);
    }

    #[test]
    fn a_step_is_reported_in_the_cli_words() {
        let done = train::interpret(
            200,
            json!({"status": "ok", "step": 2, "samples": 3, "mean_reward": 1.0, "loss": 0.5}),
        );
        assert_eq!(
            done.words,
            "Step 2 done: 3 samples, mean reward 1.00, loss 0.50"
        );
        let skipped = train::interpret(
            200,
            json!({"status": "skipped", "samples": 0, "message": "0 judged sample(s) waiting; a step needs 1"}),
        );
        assert_eq!(
            skipped.words,
            "Nothing to train: 0 judged sample(s) waiting; a step needs 1"
        );
    }
}
