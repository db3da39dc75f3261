//! A local stand-in for the OpenAI-compatible services weight learning calls: the judge
//! (`POST /v1/chat/completions`, answering scripted verdict texts) and the distillation
//! teacher (`POST /v1/completions` with `echo`, answering per-token logprobs of the prompt).
//!
//! Judge replies come from [`FakeJudge::push_reply`] in order, then `default_reply`.
//! [`FakeJudge::push_fault`] answers the next request(s) with an HTTP error instead. The
//! teacher scores token-id prompts with [`teacher_logprob`] (first token: `null`, as real
//! servers do). Every request is recorded.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The teacher's logprob of `token` in the fake: a fixed function of the id.
pub fn teacher_logprob(token: u32) -> f32 {
    -0.25 - (token % 5) as f32 * 0.25
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<String>>,
    faults: Mutex<VecDeque<u16>>,
    requests: Mutex<Vec<(String, Value)>>,
    default_reply: Mutex<String>,
    shutdown: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running fake; stops when dropped.
#[derive(Debug)]
pub struct FakeJudge {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: Option<JoinHandle<io::Result<()>>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl FakeJudge {
    /// Serves on 127.0.0.1 (any free port); unscripted judge replies are `Score: 1`.
    pub async fn start() -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        *lock(&shared.default_reply) = "The answer follows the instruction.\nScore: 1".to_owned();
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/completions", post(completions))
            .with_state(shared.clone());
        let stop = shared.shutdown.clone().cancelled_owned();
        let server = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(stop)
                .await
        });
        Ok(Self {
            addr,
            shared,
            server: Some(server),
        })
    }

    /// `http://127.0.0.1:P/v1`, as OpenAI clients expect.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The next judge reply text (FIFO).
    pub fn push_reply(&self, text: &str) {
        lock(&self.shared.replies).push_back(text.to_owned());
    }

    /// The reply once the scripted ones are used up.
    pub fn set_default_reply(&self, text: &str) {
        *lock(&self.shared.default_reply) = text.to_owned();
    }

    /// Answers the next `times` requests (either route) with `status`.
    pub fn push_fault(&self, status: u16, times: usize) {
        let mut faults = lock(&self.shared.faults);
        for _ in 0..times {
            faults.push_back(status);
        }
    }

    /// Requests received so far: (path, body).
    pub fn requests(&self) -> Vec<(String, Value)> {
        lock(&self.shared.requests).clone()
    }

    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

impl Drop for FakeJudge {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

fn fault(shared: &Shared, path: &str, body: &Value) -> Option<Response> {
    lock(&shared.requests).push((path.to_owned(), body.clone()));
    let status = lock(&shared.faults).pop_front()?;
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let err = json!({"error": {"message": "injected fault", "type": "server_error"}});
    Some((code, Json(err)).into_response())
}

async fn chat(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    if let Some(r) = fault(&shared, "/v1/chat/completions", &body) {
        return r;
    }
    let text = lock(&shared.replies)
        .pop_front()
        .unwrap_or_else(|| lock(&shared.default_reply).clone());
    Json(json!({
        "id": "chatcmpl-judge",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        // As a provider reports it: the prompt's length in four-character tokens.
        "usage": {"prompt_tokens": body["messages"].to_string().len() / 4,
                  "completion_tokens": text.len() / 4},
    }))
    .into_response()
}

async fn completions(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    if let Some(r) = fault(&shared, "/v1/completions", &body) {
        return r;
    }
    let Some(tokens) = body["prompt"].as_array() else {
        let err = json!({"error": {"message": "prompt must be token ids"}});
        return (StatusCode::BAD_REQUEST, Json(err)).into_response();
    };
    let logprobs: Vec<Value> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| match (i, t.as_u64()) {
            (0, _) | (_, None) => Value::Null,
            (_, Some(t)) => json!(teacher_logprob(t as u32)),
        })
        .collect();
    Json(json!({
        "id": "cmpl-teacher",
        "object": "text_completion",
        "model": body["model"],
        "choices": [{"index": 0, "text": "", "finish_reason": "length",
                     "logprobs": {"token_logprobs": logprobs}}],
        "usage": {"prompt_tokens": tokens.len(), "completion_tokens": 0},
    }))
    .into_response()
}
