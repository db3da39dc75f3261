//! `GET /api/logs?lines=200&level=info`: the newest lines of the current log file (text or
//! JSON format, see `logging.rs`), parsed into time, level, target and message.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::routes::AdminState;

const DEFAULT_LINES: usize = 200;
const MAX_LINES: usize = 5000;
/// Only the end of a large file is read: the lines asked for are the newest.
const TAIL_BYTES: u64 = 8 * 1024 * 1024;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/logs", get(logs))
}

#[derive(Deserialize)]
struct LogsQuery {
    lines: Option<usize>,
    level: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct LogLine {
    pub time: String,
    pub level: String,
    pub target: String,
    pub message: String,
    pub text: String,
}

async fn logs(
    State(state): State<Arc<AdminState>>,
    Query(q): Query<LogsQuery>,
) -> Result<Json<Value>, ApiError> {
    let min = match q.level.as_deref().map(str::trim).filter(|l| !l.is_empty()) {
        None => 0,
        Some(l) => severity(l).ok_or_else(|| {
            ApiError::BadRequest("level must be one of trace, debug, info, warn or error.".into())
        })?,
    };
    let lines = q.lines.unwrap_or(DEFAULT_LINES).clamp(1, MAX_LINES);
    let dir = state.log_dir.clone();
    let read = tokio::task::spawn_blocking(move || -> std::io::Result<Value> {
        let Some(file) = crate::logging::newest_log(&dir) else {
            return Ok(json!({"file": null, "lines": []}));
        };
        let text = tail(&file)?;
        let kept = filter(&text, min, lines);
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
        Ok(json!({"file": name, "lines": kept}))
    })
    .await?
    .map_err(|e| ApiError::Internal(format!("cannot read the log file: {e}")))?;
    Ok(Json(read))
}

/// The file's last [`TAIL_BYTES`], starting at a whole line.
fn tail(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    Ok(if start > 0 {
        text.split_once('\n')
            .map(|(_, rest)| rest.to_owned())
            .unwrap_or_default()
    } else {
        text
    })
}

/// The newest `max` lines at `min` severity or above, newest last. A line that does not
/// parse (the rest of a multi-line message) belongs to the line before it.
pub(super) fn filter(text: &str, min: u8, max: usize) -> Vec<LogLine> {
    let mut out = Vec::new();
    let mut current: Option<(u8, LogLine)> = None;
    for raw in text.lines().filter(|l| !l.trim().is_empty()) {
        match parse(raw) {
            Some(line) => {
                let level = severity(&line.level).unwrap_or(0);
                current = Some((level, line.clone()));
                if level >= min {
                    out.push(line);
                }
            }
            None => {
                let (level, mut line) = current.clone().unwrap_or((
                    0,
                    LogLine {
                        time: String::new(),
                        level: String::new(),
                        target: String::new(),
                        message: String::new(),
                        text: String::new(),
                    },
                ));
                line.message = raw.to_owned();
                line.text = raw.to_owned();
                if level >= min {
                    out.push(line);
                }
            }
        }
    }
    let skip = out.len().saturating_sub(max);
    out.split_off(skip)
}

fn severity(level: &str) -> Option<u8> {
    Some(match level.trim().to_ascii_lowercase().as_str() {
        "trace" => 0,
        "debug" => 1,
        "info" => 2,
        "warn" | "warning" => 3,
        "error" => 4,
        _ => return None,
    })
}

/// One line of either format.
fn parse(raw: &str) -> Option<LogLine> {
    if raw.starts_with('{') {
        return parse_json(raw);
    }
    // `2026-12-03T09:48:09.123456Z  INFO metaclaw_engine::run: MetaClaw is serving addr=…`
    let mut parts = raw.trim_start().splitn(2, char::is_whitespace);
    let time = parts.next()?;
    if !time.starts_with(|c: char| c.is_ascii_digit()) || !time.contains('T') {
        return None;
    }
    let rest = parts.next()?.trim_start();
    let (level, rest) = rest.split_once(char::is_whitespace)?;
    severity(level)?;
    let rest = rest.trim_start();
    let (target, message) = match rest.split_once(": ") {
        Some((t, m)) => (t.to_owned(), m.to_owned()),
        None => (String::new(), rest.to_owned()),
    };
    Some(LogLine {
        time: time.to_owned(),
        level: level.to_owned(),
        target,
        message,
        text: raw.to_owned(),
    })
}

fn parse_json(raw: &str) -> Option<LogLine> {
    let v: Value = serde_json::from_str(raw).ok()?;
    let text = |key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let level = text("level");
    severity(&level)?;
    let fields = v.get("fields").and_then(Value::as_object);
    let mut message = fields
        .and_then(|f| f.get("message"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    for (k, val) in fields
        .into_iter()
        .flatten()
        .filter(|(k, _)| *k != "message")
    {
        let shown = val.as_str().map_or_else(|| val.to_string(), str::to_owned);
        message.push_str(&format!(" {k}={shown}"));
    }
    Some(LogLine {
        time: text("timestamp"),
        level,
        target: text("target"),
        message,
        text: raw.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const TEXT: &str = concat!(
        "2026-12-03T09:00:00.000001Z  INFO metaclaw_engine::run: MetaClaw is serving addr=127.0.0.1:1\n",
        "2026-12-03T09:00:01.000001Z  WARN metaclaw_engine::run: no LLM provider configured\n",
        "2026-12-03T09:00:02.000001Z ERROR metaclaw_proxy::relay: upstream broke off\n",
        "  a second line of that error\n",
        "2026-12-03T09:00:03.000001Z DEBUG metaclaw_engine::memory: idle\n",
    );

    #[test]
    fn text_lines_parse_and_filter_by_severity() {
        let all = filter(TEXT, 0, 100);
        assert_eq!(all.len(), 5);
        assert_eq!(all[0].level, "INFO");
        assert_eq!(all[0].target, "metaclaw_engine::run");
        assert_eq!(all[0].message, "MetaClaw is serving addr=127.0.0.1:1");
        assert_eq!(all[0].time, "2026-12-03T09:00:00.000001Z");
        let warn = filter(TEXT, severity("warn").unwrap(), 100);
        let levels: Vec<&str> = warn.iter().map(|l| l.level.as_str()).collect();
        assert_eq!(levels, ["WARN", "ERROR", "ERROR"]);
        assert_eq!(warn[2].text, "  a second line of that error");
    }

    #[test]
    fn the_newest_lines_are_kept_newest_last() {
        let two = filter(TEXT, 0, 2);
        assert_eq!(two[0].text, "  a second line of that error");
        assert_eq!(two[1].level, "DEBUG");
    }

    #[test]
    fn json_lines_parse() {
        let raw = r#"{"timestamp":"2026-12-03T09:00:00Z","level":"WARN","fields":{"message":"held","jobs":2},"target":"metaclaw_engine::skills"}"#;
        let l = parse(raw).unwrap();
        assert_eq!(l.level, "WARN");
        assert_eq!(l.target, "metaclaw_engine::skills");
        assert_eq!(l.message, "held jobs=2");
        assert_eq!(l.text, raw);
    }
}
