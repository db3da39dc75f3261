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

mod command;
mod reply;
mod tasks;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::future::join_all;
use rand::RngExt;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::service::{Learning, Link, pause};
use crate::config::RlConfig;
use crate::supervise::Supervisor;
use command::run_command;
use reply::{read_reply, tools};
use tasks::{Task, load_tasks, session_id};

const SYSTEM_PROMPT: &str = "You are a command-line agent completing a task in a shell. \
Work one step at a time: each reply calls the run_command tool with exactly one shell command, \
then read its output before choosing the next command. When the task is finished, call \
run_command with the command `done`.";
const TEMPERATURE: f64 = 0.6;
const MAX_TOKENS: u32 = 2048;
/// The closing request only carries the follow-up; its own reply is not used.
const CLOSE_MAX_TOKENS: u32 = 64;
/// After a 503 (nothing could answer) before the next step.
const BUSY_WAIT: Duration = Duration::from_secs(3);
const BACKLOG_POLL: Duration = Duration::from_secs(10);
const READY_POLL: Duration = Duration::from_secs(2);
/// Batches' worth of waiting samples at which the rollout pauses.
const BACKLOG_BATCHES: u64 = 4;
/// A bound on one request to the proxy (sampling a long reply included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

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
    tasks: &Supervisor,
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
    let shutdown = tasks.shutdown_token();
    tasks.spawn("rl rollout", async move {
        let Some(tasks) = load_tasks(&file).await else {
            return;
        };
        rollout.run(&tasks, &shutdown).await;
    });
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
