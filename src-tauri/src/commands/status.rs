//! `metaclaw status [--json]`.

mod health;
mod usage;
mod weights;

use metaclaw_engine::admin::Status;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::providers::CostReport;
use metaclaw_engine::schedule::{SchedulerStatus, text};
use metaclaw_engine::storage;
use serde_json::{Value, json};

use crate::admin_client::AdminClient;
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn run(paths: &Paths, as_json: bool) -> Outcome {
    let client = match AdminClient::connect(paths) {
        Ok(c) => c,
        Err(f) if f.code == crate::exit::NOT_RUNNING => {
            if as_json {
                output::line(json!({"running": false}));
            } else {
                output::line("MetaClaw: not running");
            }
            return Err(Failure {
                code: f.code,
                message: String::new(),
            });
        }
        Err(f) => return Err(f),
    };
    let runtime = crate::admin_client::runtime()?;
    let value = runtime.block_on(client.get("/api/status"))?;
    // Weight learning and the training windows; status still answers if these do not.
    let learning = runtime.block_on(client.get("/api/learning"));
    let scheduler = runtime.block_on(client.get("/api/scheduler"));
    let cost = runtime.block_on(client.get("/api/stats?hours=24"));
    let window = scheduler
        .as_ref()
        .map_err(|f| f.message.clone())
        .and_then(|v| {
            serde_json::from_value::<SchedulerStatus>(v.clone())
                .map(|w| text::render_now(&w))
                .map_err(|e| format!("unreadable scheduler status ({e})"))
        });
    if as_json {
        let mut v = value;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("running".into(), true.into());
            obj.insert(
                "learning".into(),
                learning.as_ref().map_or(Value::Null, Clone::clone),
            );
            obj.insert(
                "scheduler".into(),
                scheduler.as_ref().map_or(Value::Null, Clone::clone),
            );
            obj.insert(
                "usage".into(),
                cost.as_ref().map_or(Value::Null, Clone::clone),
            );
            // The text status's `last error:` line: the newest problem of all.
            if let Ok(s) = serde_json::from_value::<Status>(Value::Object(obj.clone())) {
                obj.insert("last_problem".into(), json!(health::last_error(&s)));
            }
            // The words of the text status's `learning:` line.
            obj.insert(
                "learning_window".into(),
                match &window {
                    Ok(w) => json!({"state": w.state, "next_window": w.next_window}),
                    Err(e) => json!({"error": e}),
                },
            );
        }
        output::line(v);
        return Ok(());
    }
    let s: Status = serde_json::from_value(value)?;
    output::line(format!(
        "MetaClaw: running (PID {}, up {})",
        s.pid,
        duration(s.uptime_secs)
    ));
    output::line(format!("  listening:  http://{}", s.listen));
    output::line(format!("  mode:       {}", s.mode));
    if s.upstreams.is_empty() {
        output::line("  upstream:   not configured (metaclaw config set llm.api_base <url>)");
    }
    for (i, u) in s.upstreams.iter().enumerate() {
        let label = if i == 0 { "upstream:  " } else { "fallback:  " };
        output::line(format!(
            "  {label} {} {} {}{} (key: {})",
            u.name,
            u.protocol,
            u.base_url,
            u.model
                .as_ref()
                .map(|m| format!(" model {m}"))
                .unwrap_or_default(),
            u.key_source
        ));
    }
    output::line(format!(
        "  requests:   {} served, {} errors",
        s.requests, s.errors
    ));
    output::line(format!("  sessions:   {} open", s.sessions_open));
    output::line(format!("  recorded:   {} turns", s.turns_recorded));
    for line in health::recorder_lines(&s.health) {
        output::line(format!("              {line}"));
    }
    match &s.skills {
        None => output::line("  skills:     off"),
        Some(k) => {
            let mut line = format!(
                "  skills:     {} in the library (generation {}), {} learned, {} improved in {} evolutions",
                k.count, k.generation, k.skills_added, k.skills_improved, k.evolutions
            );
            if k.evolutions_failed > 0 {
                line.push_str(&format!(", {} failed", k.evolutions_failed));
            }
            if k.broken_files > 0 {
                line.push_str(&format!(", {} broken files skipped", k.broken_files));
            }
            output::line(line);
            let shown = ["builtin", "user", "evolved", "imported", "team"];
            let parts: Vec<String> = shown
                .iter()
                .filter_map(|source| k.by_source.get(*source).map(|n| format!("{n} {source}")))
                .collect();
            let mut line = format!("              {}", parts.join(", "));
            if k.quarantined > 0 {
                line.push_str(&format!(
                    "; {} quarantined (metaclaw skills quarantine)",
                    k.quarantined
                ));
            }
            output::line(line);
            if let Some(team) = &k.team {
                let when = team.last_sync_ms.map_or("never synced".to_owned(), |ms| {
                    format!("synced {}", output::local_time(ms as i64))
                });
                let error = team
                    .last_error
                    .as_deref()
                    .map_or(String::new(), |e| format!("; waiting: {e}"));
                output::line(format!(
                    "              team library {} ({when}{error})",
                    team.remote
                ));
            }
        }
    }
    match &s.memory {
        None => output::line("  memory:     off"),
        Some(m) => output::line(format!(
            "  memory:     {} remembered ({} pinned) in {} scope(s), {} superseded, {} forgotten",
            m.active, m.pinned, m.scopes, m.superseded, m.archived
        )),
    }
    if let Some(e) = &s.embeddings {
        output::line(format!("  retrieval:  {}", e.line));
    }
    if let Some(w) = &s.wechat {
        output::line(format!("  wechat:     {}", w.line));
    }
    if let Some(m) = &s.learning_model {
        output::line(format!("  learns:     {}", m.line));
    }
    if let Some(st) = &s.storage {
        output::line(format!(
            "  storage:    {} on disk; {} (metaclaw storage)",
            storage::size(st.file_bytes),
            storage::retention_words(&st.retention)
        ));
        let now = storage::now_ms();
        output::line(format!(
            "              retention last ran {}",
            storage::last_run_words(st.last_run.as_ref(), now)
        ));
    }
    if let Some(line) = s.update.as_ref().and_then(|u| u.line.as_ref()) {
        output::line(format!("  update:     {line}"));
    }
    // The training-window line; status still answers if the scheduler does not.
    match &window {
        Ok(words) => {
            output::line(format!("  learning:   {}", words.state));
            output::line(format!("              {}", words.next_window));
        }
        Err(e) if scheduler.is_err() => output::line(format!("  learning:   unknown ({e})")),
        Err(e) => output::line(format!("  learning:   {e}")),
    }
    for line in health::learning_lines(&s.health) {
        output::line(format!("              {line}"));
    }
    output::line(format!(
        "  calls:      {}",
        health::calls_line(&s.learning_calls)
    ));
    output::line(format!("  tasks:      {}", health::tasks_line(&s.tasks)));
    for line in health::task_problems(&s.tasks) {
        output::line(format!("              {line}"));
    }
    // The last 24 hours' cost; status still answers if it cannot be read.
    match cost.map(serde_json::from_value::<CostReport>) {
        Ok(Ok(report)) => {
            for (i, line) in usage::lines(&report).into_iter().enumerate() {
                let label = if i == 0 {
                    "  usage:      "
                } else {
                    "              "
                };
                output::line(format!("{label}{line}"));
            }
        }
        Ok(Err(e)) => output::line(format!("  usage:      unreadable ({e})")),
        Err(f) => output::line(format!("  usage:      unknown ({})", f.message)),
    }
    match &learning {
        Ok(v) => {
            if let Some(line) = weights::line(v) {
                output::line(format!("  weights:    {line}"));
            }
        }
        Err(f) => output::line(format!("  weights:    unknown ({})", f.message)),
    }
    if let Some(problem) = &s.health.database {
        output::line(format!("  database:   {problem}"));
    }
    output::line(format!(
        "  last error: {}",
        health::last_error(&s).unwrap_or_else(|| "none".into())
    ));
    Ok(())
}

fn duration(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {}s", s / 60, s % 60),
        s => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}
