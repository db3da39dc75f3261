//! The proxy's seams: what it asks of the rest of MetaClaw, and what it hands over.
//!
//! The proxy knows nothing of skills, memory or SQLite. The engine implements these traits.

use std::future::Future;
use std::pin::Pin;
use std::time::SystemTime;

use bytes::Bytes;
pub use metaclaw_wire::usage::TokenUsage;

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

/// What one turn gets injected: the block's text and the skills and memories it carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Injection {
    /// The block, without delimiters; empty when nothing fitted this turn.
    pub block: String,
    /// What the block carries, for the turn's record: skill names, and memory ids written
    /// as `memory:<id>` (see [`Injection::carrying`]). One list keeps the remembered-block
    /// format that stores and reads it unchanged; skill names are slugs, never with a `:`.
    #[serde(default)]
    pub skills: Vec<String>,
}

/// Marks a memory id in [`Injection::skills`].
const MEMORY_PREFIX: &str = "memory:";

impl Injection {
    /// A block carrying these skills and memories.
    pub fn carrying(block: String, skills: Vec<String>, memories: &[String]) -> Injection {
        let mut carried = skills;
        carried.extend(memories.iter().map(|id| format!("{MEMORY_PREFIX}{id}")));
        Injection {
            block,
            skills: carried,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.block.trim().is_empty()
    }

    /// Names of the skills in the block.
    pub fn skill_names(&self) -> Vec<String> {
        self.skills
            .iter()
            .filter(|s| !s.starts_with(MEMORY_PREFIX))
            .cloned()
            .collect()
    }

    /// Ids of the memories in the block.
    pub fn memory_ids(&self) -> Vec<String> {
        self.skills
            .iter()
            .filter_map(|s| s.strip_prefix(MEMORY_PREFIX))
            .map(str::to_string)
            .collect()
    }
}

/// Produces the context block (skills + memories) injected into a main turn.
pub trait Injector: Send + Sync {
    /// The block for this turn, or `None` when nothing fits.
    fn context_block<'a>(&'a self, turn: &'a TurnContext) -> BoxFuture<'a, Option<Injection>>;

    /// The skill library's generation now, recorded with every turn.
    fn generation(&self) -> u64 {
        0
    }

    /// False when nothing can ever be injected (skills and memory off): the proxy then skips
    /// injection and its bookkeeping entirely.
    fn active(&self) -> bool {
        true
    }
}

/// The injector used when skills and memory are off: injects nothing.
pub struct NoInjection;

impl Injector for NoInjection {
    fn context_block<'a>(&'a self, _turn: &'a TurnContext) -> BoxFuture<'a, Option<Injection>> {
        Box::pin(async { None })
    }

    fn active(&self) -> bool {
        false
    }
}

/// Where injected blocks are remembered beyond the proxy's bounded memory and across
/// restarts, so a resent message gets its block back byte for byte (docs/skills.md,
/// Injection) however long ago it was first sent.
pub trait StickyStore: Send + Sync {
    /// The blocks remembered for these message keys of a session, as (key, injection); keys
    /// without one are left out. Asked only for the keys the proxy's memory lacks.
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        keys: &'a [String],
    ) -> BoxFuture<'a, Vec<(String, Injection)>>;
    /// Remembers a new block. Must not block: implementations queue and return.
    fn save(&self, session_id: &str, key: &str, injection: &Injection);
    /// The proxy went quiet: let go of what only speeds up reads (an open connection and
    /// its page cache). Must not block for long.
    fn release(&self) {}
}

/// Keeps nothing: blocks live only in the proxy's bounded memory, so one that left it is
/// not given back (tests, and a proxy without a database).
pub struct ForgetOnRestart;

impl StickyStore for ForgetOnRestart {
    fn load<'a>(
        &'a self,
        _session_id: &'a str,
        _keys: &'a [String],
    ) -> BoxFuture<'a, Vec<(String, Injection)>> {
        Box::pin(async { Vec::new() })
    }
    fn save(&self, _session_id: &str, _key: &str, _injection: &Injection) {}
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
    /// The skill library's generation when the turn was served.
    pub skill_generation: u64,
    /// Skills in the block this turn carried (newest user message or system prompt).
    pub injected_skills: Vec<String>,
    /// What was injected, and the usage the relay read on the way.
    pub figures: TurnFigures,
}

/// What MetaClaw measured of a turn beyond the bytes it forwarded: what it injected, and
/// the usage it read on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnFigures {
    /// Ids of the memories in the block `TurnRecord::injected_skills` came in.
    pub injected_memories: Vec<String>,
    /// Estimated tokens of every MetaClaw block in the forwarded request.
    pub injected_tokens: u64,
    /// Estimated tokens of the block the skills and memories came in.
    pub block_tokens: u64,
    /// Usage as the upstream reported it, when MetaClaw read it on the way: a translated
    /// reply (whose client-side usage may lack a figure, such as Anthropic's cache writes
    /// for an OpenAI client), or the usage chunk MetaClaw asked for and kept from a client
    /// that did not ask. `None`: the recorder reads usage from the reply.
    pub upstream_usage: Option<TokenUsage>,
    /// The session is held out from MetaClaw's block (`learning.holdout`): nothing was
    /// injected, so its outcomes are the baseline.
    pub held_out: bool,
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

/// A main turn offered to the model MetaClaw trains (modes `rl` and `madmax`).
#[derive(Debug, Clone)]
pub struct LocalTurn<'a> {
    pub session_id: &'a str,
    /// The skill library's generation the turn is served with (its sample is dropped from
    /// a batch once skills move on).
    pub skill_generation: u64,
    /// The newest user message as the user wrote it (no injected block), for the judge.
    pub query: &'a str,
    /// The request as an OpenAI chat-completions body: injected and fitted.
    pub body: &'a serde_json::Value,
    /// What the turn's block carries (skill names and `memory:<id>`s), for its sample.
    pub carried: &'a [String],
    /// The session is held out from MetaClaw's block.
    pub held_out: bool,
}

/// What the trained model made of a turn.
#[derive(Debug, Clone)]
pub enum LocalAnswer {
    /// An OpenAI `chat.completion` object.
    Reply(serde_json::Value),
    /// The model cannot answer now (backend down, not ready): the turn goes to the upstream
    /// LLM instead, with this reason logged, so the agent keeps working.
    Unavailable(String),
}

/// Serves main turns from the trained model. Side turns always go upstream.
pub trait LocalModel: Send + Sync {
    fn answer<'a>(&'a self, turn: LocalTurn<'a>) -> BoxFuture<'a, LocalAnswer>;
}
