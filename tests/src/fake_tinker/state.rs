//! State shared by the fake's handlers and its owner: options, recorded requests, faults,
//! scripted future outcomes, sessions, models, samplers and pending results.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::model::Policy;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Clone)]
pub struct FakeTinkerOptions {
    /// The key clients must send (`X-API-Key` on Tinker routes, `X-WEAVER-API-KEY` on
    /// Weaver routes).
    pub api_key: String,
    /// Tokens are `0..vocab_size`.
    pub vocab_size: u32,
    /// Sampling stops at this token unless the request's `stop` is `[]`.
    pub eos_token: Option<u32>,
    /// `client/config` asks for the JWT exchange; routes then require the issued token.
    pub jwt: bool,
    /// Base models `create_model` accepts (empty = any).
    pub supported_models: Vec<String>,
    /// Error messages repeat the key the client sent (like a careless server), so tests
    /// can check the client scrubs it.
    pub echo_key_in_errors: bool,
    /// `fwdbwd_max_chunk_len` announced by `client/config` (datums per forward_backward).
    pub max_chunk_len: Option<u64>,
}

impl Default for FakeTinkerOptions {
    fn default() -> Self {
        Self {
            api_key: "tml-fake-key-0123456789".to_owned(),
            vocab_size: 64,
            eos_token: None,
            jwt: false,
            supported_models: Vec::new(),
            echo_key_in_errors: false,
            max_chunk_len: None,
        }
    }
}

/// A failure injected in place of the normal answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answer with this status and a JSON error body (`Retry-After` when given, in seconds).
    Status {
        status: u16,
        retry_after: Option<u32>,
    },
    /// Break the connection before answering (the request is not processed).
    Disconnect,
    /// Process the request, then break the connection instead of answering (the client
    /// cannot know it ran; a resend must not run it twice).
    DisconnectAfterProcessing,
}

/// How a submitted request's result is delivered when polled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FutureScript {
    /// `try_again` (Weaver: status `running`) this many polls, then the result.
    TryAgain(u32),
    /// HTTP 408 this many polls, then the result.
    Timeout408(u32),
    /// HTTP 410 on every poll (the result expired).
    Expired,
    /// A failed request: `{"error": message, "category": category}` (Weaver: status
    /// `error`).
    Fail { message: String, category: String },
    /// `try_again` (Weaver: `running`) until [`super::FakeTinker::release_holds`], so a
    /// test can keep the client inside one operation for as long as it needs.
    Hold,
}

/// One request the fake received.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Lowercase names.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One sequence the fake answered to a sample request.
#[derive(Debug, Clone, Serialize)]
pub struct SampledSequence {
    pub sampling_session_id: String,
    /// The sampler's weights: `base:<model>`, or the path they were saved under.
    pub source: String,
    pub prompt: Vec<u32>,
    pub tokens: Vec<u32>,
    pub logprobs: Vec<f32>,
}

/// What the fake knows about one training run, for assertions.
#[derive(Debug, Clone, Serialize)]
pub struct ModelState {
    pub base_model: String,
    pub lora_rank: u64,
    /// Sequence ids in the order they ran.
    pub seq_log: Vec<u64>,
    pub forward_backward_calls: u64,
    /// Incremented by every optimizer step.
    pub weights_version: u64,
    /// Paths of saved training states and sampler weights.
    pub checkpoints: Vec<String>,
}

pub(crate) struct Model {
    pub state: ModelState,
    pub policy: Policy,
    pub next_seq: u64,
    /// Requests that arrived ahead of their turn: seq → (request id, operation, body).
    pub waiting: BTreeMap<u64, (String, String, Value)>,
}

pub(crate) enum JobResult {
    /// Not run yet (waiting for an earlier sequence id).
    Waiting,
    Done(Value),
    Failed {
        message: String,
        category: String,
    },
}

pub(crate) struct Job {
    pub result: JobResult,
    pub script: Option<FutureScript>,
    /// Polls answered so far.
    pub polls: u32,
}

#[derive(Default)]
pub(crate) struct World {
    pub sessions: HashMap<String, u64>,
    /// Sessions the server ended (heartbeats get 410).
    pub ended_sessions: HashSet<String>,
    pub models: HashMap<String, Model>,
    /// Sampling session id → (weights, sequence ids seen).
    pub samplers: HashMap<String, (Vec<f64>, HashSet<u64>)>,
    /// Saved sampler weights and training states by path.
    pub sampler_weights: HashMap<String, Vec<f64>>,
    pub states: HashMap<String, Policy>,
    pub jobs: HashMap<String, Job>,
    pub counter: u64,
    /// Responses by `X-Idempotency-Key`.
    pub idempotent: HashMap<String, Value>,
    pub replays: u64,
    pub issued_jwt: Option<String>,
    /// Scripted completions returned by the next samples instead of sampled tokens.
    pub canned: VecDeque<Vec<u32>>,
    /// Sampling session id → where its weights came from (see [`SampledSequence::source`]).
    pub sampler_sources: HashMap<String, String>,
    /// Every sequence answered, oldest first.
    pub sampled: Vec<SampledSequence>,
}

impl World {
    /// 410 for an ended session, 404 for an unknown one.
    pub fn session_error(&self, id: &str) -> (u16, String) {
        if self.ended_sessions.contains(id) {
            (410, format!("session {id} has ended"))
        } else {
            (404, format!("unknown session {id}"))
        }
    }

    pub fn next_id(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}-{}", self.counter)
    }
}

pub(crate) struct Shared {
    pub opts: FakeTinkerOptions,
    pub requests: Mutex<Vec<RecordedRequest>>,
    /// (path or `*`, fault) in FIFO order.
    pub faults: Mutex<VecDeque<(String, Fault)>>,
    /// (operation or `*`, script) applied to the next matching submission.
    pub scripts: Mutex<VecDeque<(String, FutureScript)>>,
    pub world: Mutex<World>,
    pub hf_files: Mutex<HashMap<String, Vec<u8>>>,
    pub shutdown: CancellationToken,
}

impl Shared {
    pub fn new(opts: FakeTinkerOptions) -> Self {
        Self {
            opts,
            requests: Mutex::new(Vec::new()),
            faults: Mutex::new(VecDeque::new()),
            scripts: Mutex::new(VecDeque::new()),
            world: Mutex::new(World::default()),
            hf_files: Mutex::new(HashMap::new()),
            shutdown: CancellationToken::new(),
        }
    }

    /// Takes the first queued fault for `path`.
    pub fn take_fault(&self, path: &str) -> Option<Fault> {
        let mut q = lock(&self.faults);
        let i = q.iter().position(|(p, _)| p == "*" || p == path)?;
        q.remove(i).map(|(_, f)| f)
    }

    pub fn take_script(&self, op: &str) -> Option<FutureScript> {
        let mut q = lock(&self.scripts);
        let i = q.iter().position(|(o, _)| o == "*" || o == op)?;
        q.remove(i).map(|(_, s)| s)
    }
}
