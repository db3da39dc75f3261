//! State shared by the fake's handlers and its owner: options, recorded requests, the fault
//! queue and counters.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use axum::http::{HeaderMap, Method, Uri};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::fault::Fault;
use super::learner::Task;
use super::prefix_cache::PrefixCache;

#[derive(Debug, Clone, Default)]
pub struct FakeOptions {
    /// Key the fake requires (`Authorization: Bearer` on OpenAI routes, `x-api-key` on
    /// Anthropic routes). `None` accepts any request.
    pub api_key: Option<String>,
    /// Benchmark mode: fixed minimal reply, no recording, no markers, no validation.
    pub fast: bool,
    /// Report prompt-cache usage as a provider's prefix cache would (see `prefix_cache`).
    pub prefix_cache: bool,
    /// Benchmark mode: the pause between a stream's chunks, as a model generating tokens
    /// makes (the benchmark measures whether the proxy adds to it).
    pub chunk_gap: Option<std::time::Duration>,
}

/// One request the fake received, for assertions.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedRequest {
    pub method: String,
    /// Path and query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Header names are lowercase; repeated headers appear once per value.
    pub headers: Vec<(String, String)>,
    /// The JSON body; `Null` when empty, a string holding the raw text when not JSON.
    pub body: Value,
    /// The body exactly as received, for byte-level assertions (prompt-cache prefixes).
    pub raw: String,
}

impl RecordedRequest {
    /// First value of a header (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn new(method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Self {
        let body_bytes = body;
        let body = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
        };
        Self {
            method: method.to_string(),
            path: uri
                .path_and_query()
                .map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned()),
            headers: headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body,
            raw: String::from_utf8_lossy(body_bytes).into_owned(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Model requests received (chat completions, messages, count_tokens).
    pub requests: u64,
    /// Streams whose client went away before the stream completed.
    pub cancelled_streams: u64,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub opts: FakeOptions,
    pub shutdown: CancellationToken,
    pub prefix_cache: Option<PrefixCache>,
    requests: Mutex<Vec<RecordedRequest>>,
    faults: Mutex<VecDeque<Fault>>,
    replies: Mutex<VecDeque<String>>,
    tasks: Mutex<Vec<Task>>,
    reject_response_format: AtomicBool,
    prose_for_structured: AtomicBool,
    read_lessons: AtomicBool,
    terse_lessons: AtomicBool,
    request_count: AtomicU64,
    embedding_requests: AtomicU64,
    cancelled_streams: AtomicU64,
    next_id: AtomicU64,
}

/// A poisoned lock only means a handler panicked mid-update of plain data; keep serving.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub fn new(opts: FakeOptions) -> Self {
        Self {
            prefix_cache: opts.prefix_cache.then(PrefixCache::default),
            opts,
            shutdown: CancellationToken::new(),
            requests: Mutex::default(),
            faults: Mutex::default(),
            replies: Mutex::default(),
            tasks: Mutex::default(),
            reject_response_format: AtomicBool::new(false),
            prose_for_structured: AtomicBool::new(false),
            read_lessons: AtomicBool::new(false),
            terse_lessons: AtomicBool::new(false),
            request_count: AtomicU64::new(0),
            embedding_requests: AtomicU64::new(0),
            cancelled_streams: AtomicU64::new(0),
            next_id: AtomicU64::new(1),
        }
    }

    pub fn record(&self, req: RecordedRequest) {
        lock(&self.requests).push(req);
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }

    pub fn clear_requests(&self) {
        lock(&self.requests).clear();
    }

    pub fn push_faults(&self, faults: impl IntoIterator<Item = Fault>) {
        lock(&self.faults).extend(faults);
    }

    pub fn clear_faults(&self) {
        lock(&self.faults).clear();
    }

    pub fn pop_fault(&self) -> Option<Fault> {
        lock(&self.faults).pop_front()
    }

    pub fn push_reply(&self, text: String) {
        lock(&self.replies).push_back(text);
    }

    pub fn add_task(&self, task: Task) {
        lock(&self.tasks).push(task);
    }

    pub fn tasks(&self) -> Vec<Task> {
        lock(&self.tasks).clone()
    }

    pub fn pop_reply(&self) -> Option<String> {
        lock(&self.replies).pop_front()
    }

    pub fn set_reject_response_format(&self, reject: bool) {
        self.reject_response_format.store(reject, Ordering::Relaxed);
    }

    pub fn set_prose_for_structured(&self, on: bool) {
        self.prose_for_structured.store(on, Ordering::Relaxed);
    }

    pub fn set_read_lessons(&self, on: bool) {
        self.read_lessons.store(on, Ordering::Relaxed);
    }

    pub fn set_terse_lessons(&self, on: bool) {
        self.terse_lessons.store(on, Ordering::Relaxed);
    }

    /// How lessons are written, when they are read at all.
    pub fn lesson_style(&self) -> Option<super::lessons::Style> {
        use super::lessons::Style;
        self.read_lessons.load(Ordering::Relaxed).then(|| {
            if self.terse_lessons.load(Ordering::Relaxed) {
                Style::Terse
            } else {
                Style::Helpful
            }
        })
    }

    pub fn prose_for_structured(&self) -> bool {
        self.prose_for_structured.load(Ordering::Relaxed)
    }

    pub fn rejects_response_format(&self) -> bool {
        self.reject_response_format.load(Ordering::Relaxed)
    }

    pub fn count_embedding_request(&self) {
        self.embedding_requests.fetch_add(1, Ordering::Relaxed);
    }

    pub fn embedding_requests(&self) -> u64 {
        self.embedding_requests.load(Ordering::Relaxed)
    }

    pub fn count_request(&self) {
        self.request_count.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_cancelled_stream(&self) {
        self.cancelled_streams.fetch_add(1, Ordering::Relaxed);
    }

    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub fn stats(&self) -> Stats {
        Stats {
            requests: self.request_count.load(Ordering::Relaxed),
            cancelled_streams: self.cancelled_streams.load(Ordering::Relaxed),
        }
    }
}
