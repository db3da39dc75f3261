//! The status lines for what went wrong out of sight: lost recordings, failing learning,
//! background tasks that panicked, the cost of learning calls, and which problem was the
//! newest.

use metaclaw_engine::admin::{Health, Status};
use metaclaw_engine::llm::calls::{CallCounts, LearningCalls};
use metaclaw_engine::supervise::{TaskReport, TaskState};

/// Turns lost on the way to the database, one line per cause.
pub fn recorder_lines(h: &Health) -> Vec<String> {
    let r = &h.recorder;
    let mut out = Vec::new();
    if r.dropped_queue_full > 0 {
        out.push(format!(
            "{} turns dropped: recorder queue full{}",
            r.dropped_queue_full,
            when(r.last_dropped_at_ms)
        ));
    }
    if r.failed_writes > 0 {
        out.push(format!(
            "{} turns not recorded: {}{}",
            r.failed_writes,
            r.last_write_error.as_deref().unwrap_or("write failed"),
            when(r.last_write_error_at_ms)
        ));
    }
    out
}

/// One line per learning job that failed since start.
pub fn learning_lines(h: &Health) -> Vec<String> {
    h.learning
        .iter()
        .map(|j| {
            let mut line = format!(
                "{} failing: {} failed attempt{}{}: {}",
                j.job.replace('_', " "),
                j.failures,
                if j.failures == 1 { "" } else { "s" },
                j.last_error_at_ms
                    .map_or_else(String::new, |at| format!(", last {}", relative(at))),
                j.last_error.as_deref().unwrap_or("unknown error")
            );
            if let Some(until) = j.backing_off_until_ms {
                line.push_str(&format!("; next try {}", relative(until)));
            }
            if j.given_up > 0 {
                line.push_str(&format!(
                    "; {} stretch{} of turns given up on",
                    j.given_up,
                    if j.given_up == 1 { "" } else { "es" }
                ));
            }
            line
        })
        .collect()
}

/// The background tasks in a few words: how many run, restart or failed.
pub fn tasks_line(tasks: &[TaskReport]) -> String {
    let count = |state| tasks.iter().filter(|t| t.state == state).count();
    let mut line = format!("{} background tasks running", count(TaskState::Running));
    for (state, word) in [
        (TaskState::Restarting, "restarting"),
        (TaskState::Failed, "failed"),
    ] {
        let n = count(state);
        if n > 0 {
            line.push_str(&format!(", {n} {word}"));
        }
    }
    line
}

/// One line per task that ever panicked: which, how often restarted, the last panic.
pub fn task_problems(tasks: &[TaskReport]) -> Vec<String> {
    tasks
        .iter()
        .filter_map(|t| {
            let panic = t.last_panic.as_deref()?;
            let state = match t.state {
                TaskState::Running => "running again",
                TaskState::Restarting => "restarting",
                TaskState::Ended => "ended",
                TaskState::Failed => "stopped",
            };
            Some(format!(
                "{} {state} after a panic ({} restart{}){}: {panic}",
                t.name,
                t.restarts,
                if t.restarts == 1 { "" } else { "s" },
                when(t.last_panic_ms)
            ))
        })
        .collect()
}

pub fn calls_line(c: &LearningCalls) -> String {
    let purposes: Vec<String> = c
        .by_purpose
        .iter()
        .map(|(purpose, n)| format!("{purpose} {}", n.calls))
        .collect();
    let mut line = format!(
        "{} to the provider for learning since start, {} today (UTC)",
        counts(&c.since_start),
        counts(&c.today)
    );
    if !purposes.is_empty() {
        line.push_str(&format!(" — {}", purposes.join(", ")));
    }
    line
}

fn counts(c: &CallCounts) -> String {
    let failed = if c.failed > 0 {
        format!(", {} failed", c.failed)
    } else {
        String::new()
    };
    format!(
        "{} call{} ({} tokens in, {} out{failed})",
        c.calls,
        if c.calls == 1 { "" } else { "s" },
        c.input_tokens,
        c.output_tokens
    )
}

/// The newest problem: the proxy's last error, lost recordings, failing learning, or the
/// database (which has no time, and shows when nothing newer does).
pub fn last_error(s: &Status) -> Option<String> {
    let proxy = match (&s.last_error, s.last_error_at_ms) {
        (Some(e), at) => Some((e.clone(), at.map_or(0, |a| i64::try_from(a).unwrap_or(0)))),
        _ => None,
    };
    let newest = [proxy, s.health.newest(&s.tasks)]
        .into_iter()
        .flatten()
        .max_by_key(|(_, at)| *at)
        .map(|(e, at)| format!("{e}{}", when((at > 0).then_some(at))));
    newest.or_else(|| s.health.database.clone())
}

/// ` (5m ago)`, or nothing without a time.
fn when(at_ms: Option<i64>) -> String {
    at_ms.map_or_else(String::new, |at| format!(" ({})", relative(at)))
}

fn relative(at_ms: i64) -> String {
    let now = metaclaw_engine::clock::now_ms();
    let (secs, future) = if at_ms >= now {
        ((at_ms - now) / 1000, true)
    } else {
        ((now - at_ms) / 1000, false)
    };
    let span = match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h {}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d", s / 86_400),
    };
    if future {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

#[cfg(test)]
mod tests {
    use metaclaw_engine::llm::pacing::JobHealth;
    use metaclaw_engine::recorder::RecorderHealth;

    use super::*;

    #[test]
    fn losses_and_failing_jobs_are_worded() {
        let now = metaclaw_engine::clock::now_ms();
        let h = Health {
            database: None,
            recorder: RecorderHealth {
                dropped_queue_full: 3,
                last_dropped_at_ms: Some(now - 120_000),
                failed_writes: 136,
                last_write_error: Some("the database refused the write: disk full".into()),
                last_write_error_at_ms: Some(now - 5_000),
                database_problem: None,
            },
            learning: vec![JobHealth {
                job: "skill_evolution".into(),
                failures: 2,
                last_error: Some("the evolver's answer was not usable".into()),
                last_error_at_ms: Some(now - 1_000),
                backing_off_until_ms: Some(now + 59_500),
                given_up: 1,
                ..JobHealth::default()
            }],
        };
        let recorder = recorder_lines(&h);
        assert_eq!(recorder[0], "3 turns dropped: recorder queue full (2m ago)");
        assert!(
            recorder[1]
                .starts_with("136 turns not recorded: the database refused the write: disk full ("),
            "{recorder:?}"
        );
        let learning = learning_lines(&h);
        assert!(
            learning[0].starts_with(
                "skill evolution failing: 2 failed attempts, last 1s ago: the evolver's answer was not usable; next try in "
            ),
            "{learning:?}"
        );
        assert!(learning[0].ends_with("; 1 stretch of turns given up on"));
        let newest = h.newest(&[]).unwrap();
        assert!(newest.0.starts_with("skill evolution: "), "{newest:?}");
    }

    #[test]
    fn tasks_are_counted_and_panics_named() {
        let now = metaclaw_engine::clock::now_ms();
        let task = |name: &str, state, restarts, panic: Option<&str>| TaskReport {
            name: name.into(),
            state,
            restarts,
            last_panic: panic.map(str::to_owned),
            last_panic_ms: panic.map(|_| now - 3_000),
        };
        let tasks = [
            task("proxy server", TaskState::Running, 0, None),
            task(
                "memory worker",
                TaskState::Running,
                1,
                Some("index out of range"),
            ),
            task("rl judge", TaskState::Restarting, 3, Some("bad sample")),
            task("rl rollout", TaskState::Failed, 0, Some("no tasks file")),
        ];
        assert_eq!(
            tasks_line(&tasks),
            "2 background tasks running, 1 restarting, 1 failed"
        );
        let problems = task_problems(&tasks);
        assert_eq!(problems.len(), 3);
        assert!(
            problems[0]
                .starts_with("memory worker running again after a panic (1 restart) (3s ago"),
            "{problems:?}"
        );
        assert!(
            problems[0].ends_with(": index out of range"),
            "{problems:?}"
        );
        assert!(problems[1].starts_with("rl judge restarting after a panic (3 restarts)"));
        assert!(problems[2].starts_with("rl rollout stopped after a panic (0 restarts)"));
    }
}
