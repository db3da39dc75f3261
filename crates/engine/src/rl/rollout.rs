//! Programmatic rollout (`rl.openclaw_env_data_dir`): the engine plays a command-line agent on
//! tasks from `<dir>/<split>.jsonl` (lines `{"task_id","instruction"}`), so the trained model
//! gets samples without a user at the keyboard.
//!
//! Episodes talk to MetaClaw's own proxy over HTTP exactly as an agent would (bearer proxy
//! key, session `env-<task id>-<6 hex>`, main turns), so every step becomes a sample like live
//! traffic and is judged and trained the same way. The model has one tool, `run_command`;
//! commands run with `sh -c` in a scratch directory `$METACLAW_HOME/rollout/<session>/`
//! (removed after the episode) with an emptied environment — no key of MetaClaw, the LLM or
//! the backend reaches them — a 30 s limit and a cap on the output sent back. Tool calls are
//! read from `tool_calls`, where the proxy puts the calls it parsed (the earlier
//! implementation read only `content` and so never saw one), with an inline `<tool_call>`
//! in the content as a fallback. Each episode ends with one more request of the whole
//! conversation marked `X-Session-Done`, so the last real turn gets its follow-up and the
//! session's samples are ended.
//!
//! Back-pressure: before each round the rollout waits while `4 × rl.batch_size` samples
//! already wait for training (no judge, a slow judge, `madmax` outside its windows), so it
//! never samples without bound while nothing trains, and it stops once `rl.max_steps` steps
//! are done. It also waits until the trained model serves: before that, main turns go to the
//! upstream LLM and make no samples.
//!
//! Not a sandbox: commands run as the user MetaClaw runs as, so the task file must be
//! trusted (the scratch directory and the emptied environment only keep episodes apart and
//! keys out of reach of a command that prints its environment).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures_util::future::join_all;
use metaclaw_learn::reply::parse_reply;
use rand::RngExt;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use super::service::{Learning, Link, pause};
use crate::config::RlConfig;

const SYSTEM_PROMPT: &str = "You are a command-line agent completing a task in a shell. \
Work one step at a time: each reply calls the run_command tool with exactly one shell command, \
then read its output before choosing the next command. When the task is finished, call \
run_command with the command `done`.";
const TEMPERATURE: f64 = 0.6;
const MAX_TOKENS: u32 = 2048;
/// The closing request only carries the follow-up; its own reply is not used.
const CLOSE_MAX_TOKENS: u32 = 64;
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// Output sent back to the model per command (stdout and stderr together).
const OUTPUT_CAP: usize = 8 * 1024;
/// After a 503 (nothing could answer) before the next step.
const BUSY_WAIT: Duration = Duration::from_secs(3);
const BACKLOG_POLL: Duration = Duration::from_secs(10);
const READY_POLL: Duration = Duration::from_secs(2);
/// Batches' worth of waiting samples at which the rollout pauses.
const BACKLOG_BATCHES: u64 = 4;
/// A bound on one request to the proxy (sampling a long reply included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
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

/// A tool call of the model's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// `arguments.command`, when it is a string.
    pub command: Option<String>,
}

/// The assistant message to keep in the conversation, and its tool calls: from `tool_calls`,
/// else from `<tool_call>` blocks left in the content (then moved into `tool_calls` of the
/// kept message, so the tool answers have calls to refer to). A call without an id gets one.
pub fn read_reply(message: &Value) -> (Value, Vec<Call>) {
    let mut kept = message.clone();
    let mut calls = Vec::new();
    if let Some(list) = kept.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for (i, entry) in list.iter_mut().enumerate() {
            let id = match entry.get("id").and_then(Value::as_str) {
                Some(id) if !id.is_empty() => id.to_owned(),
                _ => {
                    let id = format!("call_rollout_{i}");
                    if let Some(obj) = entry.as_object_mut() {
                        obj.insert("id".into(), json!(id));
                    }
                    id
                }
            };
            let function = entry.get("function");
            calls.push(Call {
                id,
                name: function
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                command: command_of(function.and_then(|f| f.get("arguments"))),
            });
        }
    }
    if !calls.is_empty() {
        return (kept, calls);
    }
    let content = message.get("content").and_then(Value::as_str).unwrap_or("");
    if !content.contains("<tool_call>") {
        return (kept, calls);
    }
    let parsed = parse_reply(content, &[]);
    if parsed.tool_calls.is_empty() {
        return (kept, calls);
    }
    let rebuilt = parsed.to_openai_message();
    if let (Some(obj), Some(new)) = (kept.as_object_mut(), rebuilt.as_object()) {
        for key in ["content", "tool_calls"] {
            if let Some(v) = new.get(key) {
                obj.insert(key.into(), v.clone());
            }
        }
    }
    let calls = parsed
        .tool_calls
        .iter()
        .map(|c| Call {
            id: c.id.clone(),
            name: c.name.clone(),
            command: command_of(Some(&Value::String(c.arguments.clone()))),
        })
        .collect();
    (kept, calls)
}

/// `command` of the arguments: a JSON object, or its text (as OpenAI sends it).
fn command_of(arguments: Option<&Value>) -> Option<String> {
    let parsed;
    let args = match arguments? {
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            &parsed
        }
        other => other,
    };
    args.get("command")?.as_str().map(str::to_owned)
}

fn tools() -> Value {
    json!([{
        "type": "function",
        "function": {
            "name": "run_command",
            "description": "Run one shell command in the task's working directory and return its output. Use the command `done` when the task is finished.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "A shell command, or `done`."}
                },
                "required": ["command"]
            }
        }
    }])
}

/// How an episode ended.
#[derive(Debug)]
enum End {
    Done,
    NoCommand,
    StepLimit,
    Shutdown,
    Failed(String),
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            End::Done => f.write_str("task complete"),
            End::NoCommand => f.write_str("no command issued"),
            End::StepLimit => f.write_str("step limit reached"),
            End::Shutdown => f.write_str("engine shutting down"),
            End::Failed(why) => write!(f, "request failed: {why}"),
        }
    }
}

enum Failure {
    /// 503: no model could answer; the step is used up.
    Busy,
    Shutdown,
    Other(String),
}

/// Starts the rollout when `rl.openclaw_env_data_dir` is set. `addr` is where the proxy
/// listens, `proxy_key` the key agents present.
pub fn spawn(
    learning: &Learning,
    rl: &RlConfig,
    addr: SocketAddr,
    proxy_key: Option<String>,
    shutdown: &CancellationToken,
) {
    let dir = rl.openclaw_env_data_dir.trim();
    if dir.is_empty() {
        return;
    }
    let file = Path::new(dir).join(format!("{}.jsonl", rl.openclaw_env_split));
    let http = match reqwest::Client::builder()
        .no_proxy()
        .timeout(REQUEST_TIMEOUT)
        .build()
    {
        Ok(h) => h,
        Err(e) => {
            tracing::warn!(error = %e, "programmatic rollout is off: cannot build its HTTP client");
            return;
        }
    };
    // `0.0.0.0` / `::` are listening addresses, not destinations.
    let host = if addr.ip().is_unspecified() {
        SocketAddr::from(([127, 0, 0, 1], addr.port()))
    } else {
        addr
    };
    let rollout = Rollout {
        learning: learning.clone(),
        http,
        url: format!("http://{host}/v1/chat/completions"),
        proxy_key,
        model: learning.settings().served_model.clone(),
        scratch_root: learning.settings().home.join("rollout"),
        concurrency: usize::try_from(rl.openclaw_env_concurrency.max(1)).unwrap_or(1),
        max_steps: usize::try_from(rl.openclaw_env_max_steps.max(1)).unwrap_or(1),
    };
    let shutdown = shutdown.clone();
    tokio::spawn(async move {
        let Some(tasks) = load_tasks(&file).await else {
            return;
        };
        rollout.run(&tasks, &shutdown).await;
    });
}

/// The file's tasks; `None` (one warning) when it cannot be read or holds none.
async fn load_tasks(file: &Path) -> Option<Vec<Task>> {
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

struct Rollout {
    learning: Learning,
    http: reqwest::Client,
    url: String,
    proxy_key: Option<String>,
    model: String,
    scratch_root: PathBuf,
    concurrency: usize,
    max_steps: usize,
}

/// Whether a round may start.
enum Next {
    Go,
    /// Why not yet, and when to look again.
    Wait(String, Duration),
    Stop,
}

impl Rollout {
    async fn run(&self, tasks: &[Task], shutdown: &CancellationToken) {
        // Leftovers of an earlier run that stopped mid-episode.
        let _ = tokio::fs::remove_dir_all(&self.scratch_root).await;
        let mut waiting_for: Option<String> = None;
        loop {
            match self.next() {
                Next::Stop => {
                    tracing::info!("programmatic rollout stops: rl.max_steps training steps done");
                    return;
                }
                Next::Wait(why, poll) => {
                    if waiting_for.as_deref() != Some(why.as_str()) {
                        tracing::info!("programmatic rollout waits: {why}");
                    }
                    waiting_for = Some(why);
                    if !pause(poll, shutdown).await {
                        return;
                    }
                    continue;
                }
                Next::Go => waiting_for = None,
            }
            let picked: Vec<(Task, String)> = {
                let mut rng = rand::rng();
                (0..self.concurrency)
                    .map(|_| {
                        let task = tasks[rng.random_range(0..tasks.len())].clone();
                        let session = session_id(&task.id, rng.random_range(0..0x100_0000));
                        (task, session)
                    })
                    .collect()
            };
            join_all(
                picked
                    .iter()
                    .map(|(task, session)| self.episode(task, session, shutdown)),
            )
            .await;
            if shutdown.is_cancelled() {
                return;
            }
        }
    }

    fn next(&self) -> Next {
        let inner = &self.learning.inner;
        let Some(ready) = inner.ready.get() else {
            let why = match self.learning.link() {
                Link::Unavailable(_) => "the trained model is unavailable",
                _ => "the trained model is not serving yet",
            };
            return Next::Wait(why.into(), READY_POLL);
        };
        let settings = self.learning.settings();
        if u64::try_from(ready.trainer.status().step).unwrap_or(0) >= settings.max_steps {
            return Next::Stop;
        }
        let limit = BACKLOG_BATCHES * u64::from(settings.trainer.batch_size.max(1));
        match inner.samples.counts() {
            Ok(c) if c.waiting >= limit => Next::Wait(
                format!(
                    "{} samples wait for training (pausing at {limit})",
                    c.waiting
                ),
                BACKLOG_POLL,
            ),
            Ok(_) => Next::Go,
            Err(e) => Next::Wait(format!("cannot count the samples: {e}"), BACKLOG_POLL),
        }
    }

    async fn episode(&self, task: &Task, session: &str, shutdown: &CancellationToken) {
        let scratch = self.scratch_root.join(session);
        if let Err(e) = tokio::fs::create_dir_all(&scratch).await {
            tracing::warn!(task = %task.id, error = %e, "rollout episode skipped: cannot create its scratch directory");
            return;
        }
        let mut messages = vec![
            json!({"role": "system", "content": SYSTEM_PROMPT}),
            json!({"role": "user", "content": task.instruction}),
        ];
        let mut end = End::StepLimit;
        let mut steps = 0;
        while steps < self.max_steps {
            steps += 1;
            let message = match self
                .chat(session, &messages, MAX_TOKENS, false, shutdown)
                .await
            {
                Ok(m) => m,
                Err(Failure::Busy) => {
                    if pause(BUSY_WAIT, shutdown).await {
                        continue;
                    }
                    end = End::Shutdown;
                    break;
                }
                Err(Failure::Shutdown) => {
                    end = End::Shutdown;
                    break;
                }
                Err(Failure::Other(why)) => {
                    end = End::Failed(why);
                    break;
                }
            };
            let (kept, calls) = read_reply(&message);
            messages.push(kept);
            if calls.is_empty() {
                messages.push(
                    json!({"role": "user", "content": "No command issued. Closing session."}),
                );
                end = End::NoCommand;
                break;
            }
            let mut finished = false;
            for (i, call) in calls.iter().enumerate() {
                let answer = if i > 0 {
                    "Not run: one command per step.".to_owned()
                } else if call.name != "run_command" {
                    format!(
                        "Unknown tool `{}`: the only tool is run_command.",
                        call.name
                    )
                } else {
                    match call.command.as_deref().map(str::trim) {
                        None => "run_command needs a `command` string argument.".to_owned(),
                        Some("done") => {
                            finished = true;
                            "Task complete.".to_owned()
                        }
                        Some(cmd) => run_command(cmd, &scratch, shutdown).await,
                    }
                };
                messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": answer}));
            }
            if finished {
                end = End::Done;
                break;
            }
            if shutdown.is_cancelled() {
                end = End::Shutdown;
                break;
            }
        }
        // On shutdown the server ends open sessions itself.
        if !matches!(end, End::Shutdown)
            && let Err(Failure::Other(why)) = self
                .chat(session, &messages, CLOSE_MAX_TOKENS, true, shutdown)
                .await
        {
            tracing::warn!(task = %task.id, session, error = %why, "could not close the rollout session");
        }
        if let Err(e) = tokio::fs::remove_dir_all(&scratch).await {
            tracing::warn!(dir = %scratch.display(), error = %e, "could not remove a rollout scratch directory");
        }
        tracing::info!(task = %task.id, session, steps, ended = %end, "rollout episode finished");
    }

    /// One chat completion through the proxy; the reply's `choices[0].message`.
    async fn chat(
        &self,
        session: &str,
        messages: &[Value],
        max_tokens: u32,
        done: bool,
        shutdown: &CancellationToken,
    ) -> Result<Value, Failure> {
        let body = json!({
            "model": self.model,
            "messages": messages,
            "tools": tools(),
            "temperature": TEMPERATURE,
            "max_tokens": max_tokens,
            "stream": false,
        });
        let body = serde_json::to_vec(&body).map_err(|e| Failure::Other(e.to_string()))?;
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("x-session-id", session)
            .header("x-turn-type", "main")
            .body(body);
        if let Some(key) = &self.proxy_key {
            req = req.bearer_auth(key);
        }
        if done {
            req = req.header("x-session-done", "true");
        }
        let exchange = async {
            let resp = req
                .send()
                .await
                .map_err(|e| Failure::Other(e.to_string()))?;
            let status = resp.status();
            if status == reqwest::StatusCode::SERVICE_UNAVAILABLE {
                return Err(Failure::Busy);
            }
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| Failure::Other(e.to_string()))?;
            if !status.is_success() {
                let text = String::from_utf8_lossy(&bytes);
                return Err(Failure::Other(format!(
                    "HTTP {status}: {}",
                    text.chars().take(200).collect::<String>()
                )));
            }
            let reply: Value = serde_json::from_slice(&bytes)
                .map_err(|e| Failure::Other(format!("the reply is not JSON: {e}")))?;
            reply
                .pointer("/choices/0/message")
                .cloned()
                .ok_or_else(|| Failure::Other("the reply has no choices[0].message".into()))
        };
        tokio::select! {
            () = shutdown.cancelled() => Err(Failure::Shutdown),
            r = exchange => r,
        }
    }
}

/// Runs `command` with `sh -c` in `dir` and says what happened, for the model: `Output:` and
/// the text (stdout then stderr, capped), `(no output)`, or why it did not run or finish.
async fn run_command(command: &str, dir: &Path, shutdown: &CancellationToken) -> String {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .env_clear()
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
        )
        .env("HOME", dir)
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so what the command started can be stopped with it.
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return format!("Error: the command could not be started: {e}"),
    };
    let pid = child.id();
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let finished = {
        let work = async {
            let (out, err, status) = tokio::join!(
                read_capped(stdout, OUTPUT_CAP),
                read_capped(stderr, OUTPUT_CAP),
                child.wait()
            );
            (out, err, status)
        };
        tokio::select! {
            () = shutdown.cancelled() => None,
            r = tokio::time::timeout(COMMAND_TIMEOUT, work) => Some(r),
        }
    };
    kill_group(pid);
    let _ = child.kill().await;
    match finished {
        None => "Error: stopped, MetaClaw is shutting down.".to_owned(),
        Some(Err(_)) => format!(
            "Error: the command did not finish within {} s and was stopped.",
            COMMAND_TIMEOUT.as_secs()
        ),
        Some(Ok((out, err, status))) => {
            let code = status.ok().and_then(|s| s.code());
            describe_output(&out, &err, code)
        }
    }
}

/// Up to `cap` bytes and whether there was more. Reading stops at the cap: the writer then
/// gets a broken pipe instead of filling memory.
async fn read_capped<R: AsyncRead + Unpin>(reader: Option<R>, cap: usize) -> (Vec<u8>, bool) {
    let Some(reader) = reader else {
        return (Vec::new(), false);
    };
    let mut buf = Vec::new();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let _ = reader.take(limit).read_to_end(&mut buf).await;
    let more = buf.len() > cap;
    buf.truncate(cap);
    (buf, more)
}

fn describe_output(out: &(Vec<u8>, bool), err: &(Vec<u8>, bool), code: Option<i32>) -> String {
    let mut text = String::from_utf8_lossy(&out.0).into_owned();
    let stderr = String::from_utf8_lossy(&err.0);
    if !stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&stderr);
    }
    let mut cut = out.1 || err.1;
    if text.len() > OUTPUT_CAP {
        let mut end = OUTPUT_CAP;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        cut = true;
    }
    let mut answer = if text.trim().is_empty() {
        "(no output)".to_owned()
    } else {
        format!("Output:\n{text}")
    };
    if cut {
        answer.push_str(&format!("\n[output cut at {} KiB]", OUTPUT_CAP / 1024));
    }
    match code {
        Some(0) => {}
        Some(c) => answer.push_str(&format!("\n[exit status {c}]")),
        None => answer.push_str("\n[ended by a signal]"),
    }
    answer
}

#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    let pid = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        // Gone already (ESRCH) is the usual case.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: Option<u32>) {}

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

    #[test]
    fn calls_are_read_from_tool_calls() {
        let msg = json!({
            "role": "assistant",
            "content": null,
            "reasoning_content": "look first",
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "run_command", "arguments": "{\"command\":\"ls -la\"}"}},
                {"type": "function",
                 "function": {"name": "run_command", "arguments": {"command": "pwd"}}},
                {"id": "call_3", "type": "function",
                 "function": {"name": "other", "arguments": "{\"x\":1}"}}
            ]
        });
        let (kept, calls) = read_reply(&msg);
        assert_eq!(
            calls,
            vec![
                Call {
                    id: "call_1".into(),
                    name: "run_command".into(),
                    command: Some("ls -la".into())
                },
                Call {
                    id: "call_rollout_1".into(),
                    name: "run_command".into(),
                    command: Some("pwd".into())
                },
                Call {
                    id: "call_3".into(),
                    name: "other".into(),
                    command: None
                },
            ]
        );
        assert_eq!(kept["tool_calls"][1]["id"], "call_rollout_1");
        assert_eq!(kept["reasoning_content"], "look first");
    }

    #[test]
    fn an_inline_tool_call_in_the_content_is_read_and_moved() {
        let msg = json!({
            "role": "assistant",
            "content": "Let me look.\n<tool_call>{\"name\":\"run_command\",\"arguments\":{\"command\":\"echo hi\"}}</tool_call>"
        });
        let (kept, calls) = read_reply(&msg);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "run_command");
        assert_eq!(calls[0].command.as_deref(), Some("echo hi"));
        assert_eq!(kept["content"], "Let me look.");
        assert_eq!(kept["tool_calls"][0]["id"], json!(calls[0].id));
        assert_eq!(kept["tool_calls"][0]["function"]["name"], "run_command");
    }

    #[test]
    fn a_reply_without_a_call_has_none() {
        let msg = json!({"role": "assistant", "content": "I am done thinking."});
        let (kept, calls) = read_reply(&msg);
        assert!(calls.is_empty());
        assert_eq!(kept, msg);
        let broken = json!({"role": "assistant", "content": "<tool_call>not json</tool_call>"});
        let (kept, calls) = read_reply(&broken);
        assert!(calls.is_empty());
        assert_eq!(kept, broken);
    }

    #[test]
    fn output_is_described_and_capped() {
        assert_eq!(
            describe_output(&(b"hi\n".to_vec(), false), &(Vec::new(), false), Some(0)),
            "Output:\nhi\n"
        );
        assert_eq!(
            describe_output(&(Vec::new(), false), &(Vec::new(), false), Some(0)),
            "(no output)"
        );
        assert_eq!(
            describe_output(&(b"a".to_vec(), false), &(b"oops".to_vec(), false), Some(2)),
            "Output:\na\noops\n[exit status 2]"
        );
        let big = describe_output(
            &(vec![b'x'; OUTPUT_CAP], false),
            &(b"more".to_vec(), false),
            Some(0),
        );
        assert!(big.ends_with("[output cut at 8 KiB]"), "{big}");
        assert!(big.len() < OUTPUT_CAP + 64);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn commands_run_in_the_scratch_dir_without_the_engine_environment() {
        let dir = tempfile::tempdir().unwrap();
        let never = CancellationToken::new();
        // Cargo runs tests with CARGO_* set: none of it may reach the command.
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
        let out = run_command("pwd; echo \"home=$HOME\"; env", dir.path(), &never).await;
        let real = std::fs::canonicalize(dir.path()).unwrap();
        assert!(out.contains(&format!("{}\n", real.display())), "{out}");
        assert!(
            out.contains(&format!("home={}", dir.path().display())),
            "{out}"
        );
        assert!(!out.contains("CARGO_"), "{out}");
        assert!(out.contains("LANG=C.UTF-8"), "{out}");
        let big = run_command("yes", dir.path(), &never).await;
        assert!(big.contains("[output cut at 8 KiB]"), "{big}");
        let failed = run_command("exit 3", dir.path(), &never).await;
        assert_eq!(failed, "(no output)\n[exit status 3]");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn shutdown_stops_a_running_command() {
        let dir = tempfile::tempdir().unwrap();
        let stop = CancellationToken::new();
        stop.cancel();
        let out = run_command("sleep 100", dir.path(), &stop).await;
        assert!(out.contains("shutting down"), "{out}");
    }
}
