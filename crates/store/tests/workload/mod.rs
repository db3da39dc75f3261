//! Synthetic agent conversations for the disk-layout test (`tests/disk_layout.rs`) and
//! benchmark (`examples/disk_bench.rs`): generated, so no recorded user data ships with the
//! repository, and deterministic, so runs compare.

use metaclaw_store::NewTurn;

/// Common words, plus identifiers and numbers drawn at random (see [`Words::text`]): about as
/// compressible as real prompts and chat (zstd: ~3x on kilobytes, far less on a short
/// message), rather than the easy case of a few words repeated.
const VOCABULARY: &[&str] = &[
    "the", "of", "and", "to", "a", "in", "is", "it", "you", "that", "for", "on", "with", "as",
    "be", "this", "are", "or", "not", "can", "file", "function", "test", "error", "should", "when",
    "if", "we", "use", "from", "by", "value", "return", "new", "change", "code", "run", "build",
    "user", "request", "check", "before", "after", "each", "list", "read", "write", "path", "line",
    "name", "type", "string", "number", "result", "make", "sure", "always", "never", "keep",
    "only", "also", "because", "which", "what", "how", "where", "there", "tool", "call", "output",
    "input", "command", "server", "client", "config", "option", "default", "branch", "commit",
    "review", "patch", "diff", "module", "crate", "package", "install", "version", "update",
    "remove", "add", "fix", "bug", "issue", "log", "debug", "print", "format", "parse", "json",
    "field", "key", "map", "array", "index", "query", "database", "table", "row", "column",
    "cache", "memory", "disk", "size", "time", "date", "task", "step", "plan", "goal", "answer",
    "question", "reply", "message", "context", "system", "prompt", "agent", "model", "token",
    "limit", "stream", "event", "handler", "thread", "process", "signal", "wait", "start", "stop",
    "open", "close", "save", "load", "send", "receive", "network", "socket", "port", "host", "url",
    "header", "body", "status", "should", "must", "might", "will", "would", "could", "have", "has",
    "had", "do", "does", "did", "get", "set", "go", "see", "look", "find", "show", "tell", "ask",
    "explain", "try", "work", "works", "working", "first", "last", "next", "previous", "same",
    "other", "all", "some", "any", "none", "more", "less", "most", "least", "very", "quite",
    "just", "still", "already", "yet", "again", "here", "now", "then", "so", "but", "than", "into",
    "over", "under", "between", "without", "within", "across", "through", "about", "above",
    "below",
];

/// A deterministic source of words (xorshift64*).
pub struct Words(u64);

impl Words {
    pub fn new(seed: u64) -> Self {
        Words(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }

    /// About `bytes` of sentences: mostly common words, one word in six an identifier, a
    /// path or a number.
    pub fn text(&mut self, bytes: usize) -> String {
        let mut out = String::with_capacity(bytes + 16);
        while out.len() < bytes {
            let word = match self.below(6) {
                0 => match self.below(3) {
                    0 => format!("{}", self.below(100_000)),
                    1 => format!("src/{}_{}.rs", self.word(), self.below(50)),
                    _ => format!("{}{:x}", self.word(), self.below(1 << 20)),
                },
                _ => self.word().to_owned(),
            };
            out.push_str(&word);
            out.push_str(if self.below(12) == 0 { ". " } else { " " });
        }
        out.truncate(bytes);
        out
    }

    fn word(&mut self) -> &'static str {
        VOCABULARY[self.below(VOCABULARY.len())]
    }
}

/// Conversations of an agent that resends its whole history each turn.
#[derive(Debug, Clone, Copy)]
pub struct Chat {
    pub conversations: usize,
    pub turns: usize,
    pub system_bytes: usize,
    pub user_bytes: usize,
    pub assistant_bytes: usize,
}

/// The workload of issue 34: 10 conversations of 20 turns, a 6 KB system prompt (the same in
/// every conversation, as an agent's is), ~200-byte user messages, ~600-byte replies.
pub const AGENT_CHAT: Chat = Chat {
    conversations: 10,
    turns: 20,
    system_bytes: 6 * 1024,
    user_bytes: 200,
    assistant_bytes: 600,
};

/// The turns of `chat` in the order an engine records them: the conversations take turns.
/// OpenAI chat completions requests, compact JSON as agents send them, each reply the
/// assistant message of the next request.
pub fn chat_turns(chat: &Chat, seed: u64) -> Vec<NewTurn> {
    let mut words = Words::new(seed);
    let system = words.text(chat.system_bytes);
    let mut histories: Vec<Vec<serde_json::Value>> = (0..chat.conversations)
        .map(|_| vec![serde_json::json!({"role": "system", "content": system})])
        .collect();
    let mut out = Vec::with_capacity(chat.conversations * chat.turns);
    for turn in 0..chat.turns {
        for (c, history) in histories.iter_mut().enumerate() {
            history
                .push(serde_json::json!({"role": "user", "content": words.text(chat.user_bytes)}));
            let request = serde_json::json!({
                "model": "gpt-4.1-mini",
                "messages": history,
                "stream": true,
                "stream_options": {"include_usage": true},
                "temperature": 0.2,
            });
            let answer = words.text(chat.assistant_bytes);
            let reply = serde_json::json!({
                "id": format!("chatcmpl-{:024x}", words.below(1 << 30)),
                "object": "chat.completion",
                "created": 1_767_225_600 + turn as u64 * 60,
                "model": "gpt-4.1-mini-2025-04-14",
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": answer}}],
                "usage": {"prompt_tokens": 1500 + turn * 200, "completion_tokens": 150,
                    "total_tokens": 1650 + turn * 200},
            });
            history.push(serde_json::json!({"role": "assistant", "content": answer}));
            out.push(new_turn(
                &format!("conversation-{c:02}-{seed:08x}"),
                request.to_string(),
                reply.to_string(),
                (turn * chat.conversations + c) as i64,
            ));
        }
    }
    out
}

/// A main turn with the figures the recorder fills in.
pub fn new_turn(session: &str, request_json: String, reply_json: String, at: i64) -> NewTurn {
    NewTurn {
        session_id: session.to_owned(),
        turn_type: "main".to_owned(),
        scope: "default".to_owned(),
        client_protocol: "openai".to_owned(),
        upstream_protocol: "openai".to_owned(),
        upstream: "primary".to_owned(),
        model: "gpt-4.1-mini".to_owned(),
        request_json,
        reply_json: Some(reply_json),
        status: 200,
        error: None,
        input_tokens: Some(1_500 + at as u64),
        output_tokens: Some(150),
        cache_read_tokens: Some(1_024),
        cache_write_tokens: Some(0),
        overhead_ms: 1.5,
        ttft_ms: Some(420.0),
        total_ms: 2_100.0,
        created_at_ms: 1_767_225_600_000 + at * 60_000,
        skill_generation: 3,
        injected_skills: vec!["debugging".to_owned()],
        injected_memories: Vec::new(),
        injected_tokens: Some(180),
        block_tokens: Some(180),
        held_out: false,
    }
}
