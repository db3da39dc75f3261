//! A local stand-in for the LLM providers the proxy talks to. It speaks the real OpenAI chat
//! completions and Anthropic Messages wire formats (JSON and SSE, errors included), answers
//! deterministically, records what it received, and injects faults on demand.
//!
//! Replies: `Echo: <newest user text>`; a tool call to the first tool when tools are offered
//! and the text contains `call tool`; `Tool said: <result>` after a tool result. Faults come
//! from [`FakeUpstream::push_fault`] / `POST /_faults`, or a `[[fault:...]]` marker in the
//! newest user text (see [`Fault`]). [`FakeUpstream::push_reply`] scripts exact assistant
//! texts instead. `POST /v1/embeddings` answers deterministic bag-of-words vectors.

mod anthropic;
mod embeddings;
mod errors;
mod fault;
mod learner;
mod lessons;
mod openai;
mod prefix_cache;
mod reply;
mod routes;
mod sse;
mod state;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use errors::{RETRY_AFTER_SECS, STATUS_OVERLOADED};
pub use fault::Fault;
pub use learner::Task;
pub use prefix_cache::CacheUse;
pub use state::{FakeOptions, RecordedRequest, Stats};

/// How long [`FakeUpstream::shutdown`] lets open connections finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A running fake; stops when shut down or dropped.
#[derive(Debug)]
pub struct FakeUpstream {
    addr: SocketAddr,
    shared: Arc<state::Shared>,
    server: Option<JoinHandle<io::Result<()>>>,
}

impl FakeUpstream {
    /// Serves on 127.0.0.1 (any free port) on the current tokio runtime.
    pub async fn start(opts: FakeOptions) -> io::Result<Self> {
        Self::start_on_port(opts, 0).await
    }

    /// Serves on 127.0.0.1:`port` (0 = any free port).
    pub async fn start_on_port(opts: FakeOptions, port: u16) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        // Small SSE frames must not wait for Nagle's algorithm.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let shared = Arc::new(state::Shared::new(opts));
        let app = routes::router(shared.clone());
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

    /// The prompt-cache figures reported so far, oldest first (empty unless
    /// `FakeOptions::prefix_cache`).
    pub fn cache_uses(&self) -> Vec<CacheUse> {
        self.shared
            .prefix_cache
            .as_ref()
            .map(prefix_cache::PrefixCache::log)
            .unwrap_or_default()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Base URL for OpenAI-compatible clients: `http://127.0.0.1:P/v1`.
    pub fn base_url_openai(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Base URL for Anthropic clients: `http://127.0.0.1:P`.
    pub fn base_url_anthropic(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests()
    }

    pub fn clear_requests(&self) {
        self.shared.clear_requests();
    }

    /// Queues a fault for the next model request (FIFO, one fault per request).
    pub fn push_fault(&self, fault: Fault) {
        self.shared.push_faults([fault]);
    }

    /// Queues an exact assistant text for the next chat request on either protocol (FIFO,
    /// one per request), replacing the decided reply and any marker in the user text. Faults
    /// queued with [`Self::push_fault`] still apply first; an error fault leaves the scripted
    /// reply queued for the request after it.
    /// Registers a question answered right only when the request carries what it needs
    /// (see [`Task`]); structured-output calls named `skills` or `memories` learn every
    /// "From now on …" sentence of their prompt without any registration.
    pub fn add_task(&self, task: Task) {
        self.shared.add_task(task);
    }

    /// While on, structured-output calls named `skills` or `memories` learn every rule the
    /// user's turns state, explicitly or as a correction, with the request it was stated for
    /// (see `lessons`), instead of only "From now on" sentences.
    pub fn read_lessons(&self, on: bool) {
        self.shared.set_read_lessons(on);
    }

    /// While on (with [`Self::read_lessons`]), the lessons are written as a terse learning
    /// model writes them: the description and tags only restate the rule, never the kind of
    /// request it was stated for.
    pub fn terse_lessons(&self, on: bool) {
        self.shared.set_terse_lessons(on);
    }

    pub fn push_reply(&self, text: impl Into<String>) {
        self.shared.push_reply(text.into());
    }

    /// While on, OpenAI chat requests carrying `response_format` are refused with a 400 that
    /// names the parameter, like providers without structured-output support.
    pub fn reject_response_format(&self, reject: bool) {
        self.shared.set_reject_response_format(reject);
    }

    /// While on, every call that asks for JSON (structured output, or the schema in the
    /// prompt) is answered with prose: a learning model that never answers usable JSON.
    /// Scripted replies ([`Self::push_reply`]) still come first.
    pub fn answer_prose_to_structured_output(&self, on: bool) {
        self.shared.set_prose_for_structured(on);
    }

    /// `POST /v1/embeddings` requests received (also counted in [`Self::request_count`]).
    pub fn embedding_requests(&self) -> u64 {
        self.shared.embedding_requests()
    }

    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// Model requests received.
    pub fn request_count(&self) -> u64 {
        self.shared.stats().requests
    }

    /// Streams whose client disconnected before the stream completed.
    pub fn cancelled_streams(&self) -> u64 {
        self.shared.stats().cancelled_streams
    }

    /// Polls until at least `n` streams were cancelled; false if `timeout` passed first.
    pub async fn wait_cancelled_streams(&self, n: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.cancelled_streams() >= n {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Stops accepting, ends hanging requests, and waits (bounded) for connections to close.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        if let Some(mut server) = self.server.take()
            && tokio::time::timeout(SHUTDOWN_GRACE, &mut server)
                .await
                .is_err()
        {
            server.abort();
        }
    }
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}
