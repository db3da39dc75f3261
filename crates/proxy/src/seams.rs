//! The proxy's seams: what it asks of the rest of MetaClaw, and what it hands over.
//!
//! The proxy knows nothing of skills, memory or SQLite. The engine implements these traits.

use std::future::Future;
use std::pin::Pin;
use std::time::SystemTime;

use bytes::Bytes;

/// Which wire protocol a client or upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// OpenAI chat completions.
    Openai,
    /// Anthropic messages.
    Anthropic,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Openai => "openai",
            Protocol::Anthropic => "anthropic",
        }
    }
}

/// `main` turns are learned from and get context injected; `side` turns pass untouched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnType {
    Main,
    Side,
}

impl TurnType {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnType::Main => "main",
            TurnType::Side => "side",
        }
    }
}

/// What the injector is told about a main turn.
#[derive(Debug, Clone)]
pub struct TurnContext {
    pub session_id: String,
    pub scope: String,
    pub client_protocol: Protocol,
    pub model: String,
    /// The newest user message as plain text, with agent metadata stripped.
    pub query: String,
}

/// A boxed future, so the traits stay object-safe without extra crates.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Produces the context block (skills + memories) injected into a main turn.
pub trait Injector: Send + Sync {
    /// Returns the text of the block, or `None` when nothing fits this turn.
    fn context_block<'a>(&'a self, turn: &'a TurnContext) -> BoxFuture<'a, Option<String>>;
}

/// The injector used until skills and memory are wired in: injects nothing.
pub struct NoInjection;

impl Injector for NoInjection {
    fn context_block<'a>(&'a self, _turn: &'a TurnContext) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }
}

/// The reply as the client saw it, captured without parsing on the hot path.
#[derive(Debug, Clone)]
pub enum ReplyCapture {
    /// A complete JSON body (non-streaming).
    Json(Bytes),
    /// The SSE bytes sent to the client, in order, in the client's protocol.
    Sse(Vec<Bytes>),
    /// Nothing usable reached the client (error before the first byte).
    None,
}

/// One finished turn, handed to the recorder after the reply ended.
#[derive(Debug, Clone)]
pub struct TurnRecord {
    pub session_id: String,
    pub turn_type: TurnType,
    pub scope: String,
    pub client_protocol: Protocol,
    pub upstream_protocol: Protocol,
    /// Name of the upstream that answered (the primary or a fallback).
    pub upstream: String,
    pub model: String,
    /// The request body exactly as forwarded upstream.
    pub request: Bytes,
    /// The reply exactly as the client saw it.
    pub reply: ReplyCapture,
    /// HTTP status returned to the client.
    pub status: u16,
    /// A short description when the turn failed or the stream broke.
    pub error: Option<String>,
    /// Time spent inside MetaClaw, excluding the upstream.
    pub overhead_ms: f64,
    /// Time from request arrival to the first byte sent to the client.
    pub ttft_ms: Option<f64>,
    /// Time from request arrival to the last byte.
    pub total_ms: f64,
    pub started_at: SystemTime,
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The client sent `X-Session-Done` / `session_done`.
    Explicit,
    /// No request for `session.idle_timeout_minutes`.
    Idle,
    /// MetaClaw shut down with the session open.
    Shutdown,
}

impl EndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Explicit => "explicit",
            EndReason::Idle => "idle",
            EndReason::Shutdown => "shutdown",
        }
    }
}

/// Session lifecycle events, broadcast to whoever subscribes (memory, skills, recorder).
#[derive(Debug, Clone)]
pub enum SessionEvent {
    Started {
        session_id: String,
        scope: String,
        at: SystemTime,
    },
    Ended {
        session_id: String,
        scope: String,
        reason: EndReason,
        main_turns: u32,
        at: SystemTime,
    },
}

/// Receives finished turns. Must not block: implementations queue and return.
pub trait TurnSink: Send + Sync {
    fn turn_finished(&self, turn: TurnRecord);
    /// Number of turns waiting to be written (for `/metrics`).
    fn queue_depth(&self) -> usize;
    /// Session starts and ends, delivered in order with the turns.
    fn session_event(&self, _event: &SessionEvent) {}
}

/// A sink that drops everything (tests, or recording switched off).
pub struct DiscardTurns;

impl TurnSink for DiscardTurns {
    fn turn_finished(&self, _turn: TurnRecord) {}
    fn queue_depth(&self) -> usize {
        0
    }
}
