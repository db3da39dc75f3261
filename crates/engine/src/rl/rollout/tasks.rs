//! The task file of the programmatic rollout: `{"task_id","instruction"}` lines, and the
//! session id each episode goes by.

use std::path::Path;

use serde_json::Value;

/// Characters of the task id kept in the session id.
const TASK_ID_CHARS: usize = 24;

/// One task of the JSONL file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub id: String,
    pub instruction: String,
}

/// The tasks of a JSONL text and the number of lines skipped (not JSON, no string or number
/// `task_id`, no non-empty `instruction`). Blank lines are not counted.
pub fn parse_tasks(text: &str) -> (Vec<Task>, usize) {
    let mut tasks = Vec::new();
    let mut skipped = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match parse_task(line) {
            Some(task) => tasks.push(task),
            None => skipped += 1,
        }
    }
    (tasks, skipped)
}

fn parse_task(line: &str) -> Option<Task> {
    let v: Value = serde_json::from_str(line).ok()?;
    let id = match v.get("task_id")? {
        Value::String(s) if !s.trim().is_empty() => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let instruction = v.get("instruction")?.as_str()?.trim();
    (!instruction.is_empty()).then(|| Task {
        id,
        instruction: instruction.to_owned(),
    })
}

/// `env-<first 24 characters of the task id>-<6 hex>`; characters a header or a directory
/// name could not carry become `_`.
pub fn session_id(task_id: &str, nonce: u32) -> String {
    let id: String = task_id
        .chars()
        .take(TASK_ID_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("env-{id}-{:06x}", nonce & 0xff_ffff)
}

/// The file's tasks; `None` (one warning) when it cannot be read or holds none.
pub(super) async fn load_tasks(file: &Path) -> Option<Vec<Task>> {
    let shown = file.display();
    let text = match tokio::fs::read_to_string(file).await {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(file = %shown, error = %e, "programmatic rollout is off: cannot read the task file (rl.openclaw_env_data_dir, rl.openclaw_env_split)");
            return None;
        }
    };
    let (tasks, skipped) = parse_tasks(&text);
    if skipped > 0 {
        tracing::warn!(file = %shown, skipped, "task lines skipped: not {{\"task_id\",\"instruction\"}}");
    }
    if tasks.is_empty() {
        tracing::warn!(file = %shown, "programmatic rollout is off: the task file holds no task");
        return None;
    }
    tracing::info!(file = %shown, tasks = tasks.len(), "programmatic rollout starts");
    Some(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_parse_and_bad_lines_are_counted() {
        let text = r#"{"task_id":"t1","instruction":"list the files"}
not json

{"task_id":7,"instruction":"  count lines  "}
{"task_id":"t3"}
{"task_id":"","instruction":"empty id"}
{"task_id":"t4","instruction":""}
{"instruction":"no id"}
[1,2]
"#;
        let (tasks, skipped) = parse_tasks(text);
        assert_eq!(
            tasks,
            vec![
                Task {
                    id: "t1".into(),
                    instruction: "list the files".into()
                },
                Task {
                    id: "7".into(),
                    instruction: "count lines".into()
                },
            ]
        );
        assert_eq!(skipped, 6);
        assert_eq!(parse_tasks("\n  \n"), (Vec::new(), 0));
    }

    #[test]
    fn session_ids_are_short_and_safe() {
        assert_eq!(session_id("task-1", 0xabc), "env-task-1-000abc");
        let long = "abcdefghijklmnopqrstuvwxyz0123456789";
        assert_eq!(
            session_id(long, 0x1234_5678),
            "env-abcdefghijklmnopqrstuvwx-345678"
        );
        assert_eq!(session_id("a/b c\né", 1), "env-a_b_c__-000001");
    }
}
