//! A local stand-in for Tinker-compatible training backends: the Tinker JSON protocol
//! (also MinT's) and Weaver's REST protocol, over one deterministic toy model (see
//! [`model`]), plus a fake Hugging Face file host under `/hf/` for tokenizer downloads.
//!
//! Tests script what happens: [`FakeTinker::push_fault`] replaces the answer to the next
//! request on a path (a status such as 500 or 429 with `Retry-After`, or a broken
//! connection), [`FakeTinker::push_script`] decides how the next submitted request's
//! result is delivered (`try_again` or 408 a number of times, expired, failed). Every
//! request is recorded; the key is required on every route. The same controls are
//! reachable over HTTP under `/_fake/` (see [`admin`]) for the `fake-tinker` process.

pub mod admin;
mod guard;
pub mod model;
mod ops;
mod routes;
mod state;
mod weaver;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use state::{
    FakeTinkerOptions, Fault, FutureScript, ModelState, RecordedRequest, SampledSequence,
};

use state::lock;

/// A running fake; stops when shut down or dropped.
#[derive(Debug)]
pub struct FakeTinker {
    addr: SocketAddr,
    shared: Arc<state::Shared>,
    server: Option<JoinHandle<io::Result<()>>>,
}

impl std::fmt::Debug for state::Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl FakeTinker {
    /// Serves on 127.0.0.1 (any free port) on the current tokio runtime.
    pub async fn start(opts: FakeTinkerOptions) -> io::Result<Self> {
        Self::start_on_port(opts, 0).await
    }

    pub async fn start_on_port(opts: FakeTinkerOptions, port: u16) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
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

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Base URL for the backend clients: `http://127.0.0.1:P`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Base URL of the fake Hugging Face host: `http://127.0.0.1:P/hf`.
    pub fn hf_base_url(&self) -> String {
        format!("http://{}/hf", self.addr)
    }

    pub fn api_key(&self) -> &str {
        &self.shared.opts.api_key
    }

    /// Requests received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Requests received on `path`, oldest first.
    pub fn requests_to(&self, path: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// Replaces the answer to the next request on `path` (`*` = any path) with `fault`;
    /// queued faults apply in order, one per request.
    pub fn push_fault(&self, path: &str, fault: Fault) {
        lock(&self.shared.faults).push_back((path.to_owned(), fault));
    }

    /// Queues `fault` for the next `times` requests on `path`.
    pub fn push_faults(&self, path: &str, fault: Fault, times: usize) {
        for _ in 0..times {
            self.push_fault(path, fault.clone());
        }
    }

    /// Drops every queued fault (the backend recovers).
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }

    /// Faults still queued (not yet consumed by a request).
    pub fn pending_faults(&self) -> usize {
        lock(&self.shared.faults).len()
    }

    /// Decides how the result of the next submission of `op` (`create_model`,
    /// `forward_backward`, `optim_step`, `save_weights`, `save_weights_for_sampler`,
    /// `load_weights`, `sample`; `*` = any) is delivered.
    pub fn push_script(&self, op: &str, script: FutureScript) {
        lock(&self.shared.scripts).push_back((op.to_owned(), script));
    }

    /// Lets every submitted request held by [`FutureScript::Hold`] deliver its result;
    /// returns how many were held.
    pub fn release_holds(&self) -> usize {
        release_holds(&self.shared)
    }

    /// Requests held by [`FutureScript::Hold`] right now.
    pub fn held(&self) -> usize {
        lock(&self.shared.world)
            .jobs
            .values()
            .filter(|j| j.script == Some(FutureScript::Hold))
            .count()
    }

    /// Every sequence answered to a sample request so far, oldest first.
    pub fn sampled(&self) -> Vec<SampledSequence> {
        lock(&self.shared.world).sampled.clone()
    }

    /// Makes the next sampled sequence (on any sampler) exactly `tokens`, with their
    /// logprobs under the sampler's weights, stop reason `stop` (FIFO, one per sequence).
    pub fn push_completion(&self, tokens: Vec<u32>) {
        lock(&self.shared.world).canned.push_back(tokens);
    }

    /// The fake's view of a training run.
    pub fn model(&self, model_id: &str) -> Option<ModelState> {
        lock(&self.shared.world)
            .models
            .get(model_id)
            .map(|m| m.state.clone())
    }

    /// Invalidates the JWT issued so far (as if it expired): requests carrying it get a 401
    /// with `WWW-Authenticate: Bearer error="invalid_token"`.
    pub fn expire_jwt(&self) {
        lock(&self.shared.world).issued_jwt = None;
    }

    /// Ends a session as the server does when heartbeats stop: its heartbeats get 410.
    pub fn end_session(&self, session_id: &str) {
        let mut w = lock(&self.shared.world);
        w.sessions.remove(session_id);
        w.ended_sessions.insert(session_id.to_owned());
    }

    /// Heartbeats received for a session.
    pub fn heartbeats(&self, session_id: &str) -> u64 {
        lock(&self.shared.world)
            .sessions
            .get(session_id)
            .copied()
            .unwrap_or(0)
    }

    /// Resent submissions answered from the idempotency cache (not run again).
    pub fn idempotent_replays(&self) -> u64 {
        lock(&self.shared.world).replays
    }

    /// Serves `bytes` at `/hf/<path>` (e.g. `Qwen/Qwen3-4B/resolve/main/tokenizer.json`).
    pub fn put_hf_file(&self, path: &str, bytes: Vec<u8>) {
        lock(&self.shared.hf_files).insert(path.to_owned(), bytes);
    }

    /// Stops accepting requests and waits for the server task.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

impl Drop for FakeTinker {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

pub(crate) fn release_holds(shared: &state::Shared) -> usize {
    let mut w = lock(&shared.world);
    let mut n = 0;
    for job in w.jobs.values_mut() {
        if job.script == Some(FutureScript::Hold) {
            job.script = None;
            n += 1;
        }
    }
    n
}
