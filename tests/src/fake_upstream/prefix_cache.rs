//! A provider's prompt cache, as the fake reports it (`FakeOptions::prefix_cache`).
//!
//! Each request's prompt is rendered the way a provider reads it — tools, system prompt, then
//! every message's parts in order, with `cache_control` markers and string-or-text-part
//! shorthand not counted as content — and cut into tokens of four characters, every part
//! starting a new token. Per key (credential and model):
//!
//! - OpenAI caches every prompt it served; a new prompt's `cached_tokens` is its longest
//!   prefix shared with any earlier one.
//! - Anthropic caches only prefixes ending at a `cache_control` breakpoint: a new prompt reads
//!   the longest such prefix written before (`cache_read_input_tokens`) and writes up to its own
//!   last breakpoint (`cache_creation_input_tokens`); without a breakpoint nothing is cached.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use super::errors::Protocol;

/// Characters per token.
const TOKEN_CHARS: usize = 4;

/// What one prompt cost: all of it, and the parts read from and written to the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheUse {
    pub prompt: u64,
    pub read: u64,
    pub write: u64,
}

#[derive(Debug, Default)]
pub struct PrefixCache {
    /// Cached prefixes (token hashes) per key.
    seen: Mutex<HashMap<String, Vec<Vec<u64>>>>,
    /// Every request's figures, in the order they were accounted, for assertions.
    log: Mutex<Vec<CacheUse>>,
}

impl PrefixCache {
    /// The figures reported so far, oldest first.
    pub fn log(&self) -> Vec<CacheUse> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Accounts one request and remembers what it caches.
    pub fn account(&self, proto: Protocol, key: &str, body: &Value) -> CacheUse {
        let used = self.cached(proto, key, body);
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(used);
        used
    }

    fn cached(&self, proto: Protocol, key: &str, body: &Value) -> CacheUse {
        let prompt = render(proto, body);
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let cached = seen.entry(key.to_owned()).or_default();
        let total = prompt.tokens.len();
        match proto {
            Protocol::OpenAi => {
                let read = cached
                    .iter()
                    .map(|c| shared_prefix(c, &prompt.tokens))
                    .max()
                    .unwrap_or(0);
                cached.push(prompt.tokens);
                use_of(total, read, 0)
            }
            Protocol::Anthropic => {
                let read = cached
                    .iter()
                    .filter(|c| shared_prefix(c, &prompt.tokens) == c.len())
                    .map(Vec::len)
                    .max()
                    .unwrap_or(0);
                let last = prompt.breakpoints.iter().copied().max().unwrap_or(0);
                for &at in &prompt.breakpoints {
                    let prefix = &prompt.tokens[..at];
                    if !cached.iter().any(|c| c.as_slice() == prefix) {
                        cached.push(prefix.to_vec());
                    }
                }
                use_of(total, read, last.saturating_sub(read))
            }
        }
    }
}

fn use_of(total: usize, read: usize, write: usize) -> CacheUse {
    let n = |x: usize| u64::try_from(x).unwrap_or(u64::MAX);
    CacheUse {
        prompt: n(total),
        read: n(read),
        write: n(write),
    }
}

fn shared_prefix(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// A prompt as tokens, and the token counts at which a `cache_control` breakpoint ends.
#[derive(Debug, Default)]
struct Prompt {
    tokens: Vec<u64>,
    breakpoints: Vec<usize>,
}

impl Prompt {
    fn part(&mut self, text: &str, breakpoint: bool) {
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(TOKEN_CHARS) {
            let mut h = DefaultHasher::new();
            chunk.hash(&mut h);
            self.tokens.push(h.finish());
        }
        if breakpoint {
            self.breakpoints.push(self.tokens.len());
        }
    }

    /// A JSON part, without its `cache_control` marker.
    fn json(&mut self, value: &Value) {
        let marked = has_marker(value);
        let mut v = value.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("cache_control");
        }
        self.part(&v.to_string(), marked);
    }
}

fn has_marker(v: &Value) -> bool {
    v.get("cache_control").is_some_and(|c| !c.is_null())
}

fn render(proto: Protocol, body: &Value) -> Prompt {
    let mut p = Prompt::default();
    let list = |k: &str| body.get(k).and_then(Value::as_array).cloned();
    for tool in list("tools").unwrap_or_default() {
        p.json(&tool);
    }
    if proto == Protocol::Anthropic {
        match body.get("system") {
            Some(Value::String(s)) => p.part(s, false),
            Some(Value::Array(blocks)) => blocks.iter().for_each(|b| content_part(&mut p, b)),
            _ => {}
        }
    }
    for m in list("messages").unwrap_or_default() {
        p.part(
            &format!("<{}>", m.get("role").and_then(Value::as_str).unwrap_or("")),
            false,
        );
        match m.get("content") {
            Some(Value::String(s)) => p.part(s, false),
            Some(Value::Array(parts)) => parts.iter().for_each(|b| content_part(&mut p, b)),
            _ => {}
        }
        for key in ["tool_calls", "tool_call_id", "name"] {
            if let Some(v) = m.get(key) {
                p.json(v);
            }
        }
    }
    p
}

/// One content part or block: text as its text, a tool result as its content, anything else
/// as its JSON.
fn content_part(p: &mut Prompt, part: &Value) {
    let marked = has_marker(part);
    let kind = part.get("type").and_then(Value::as_str);
    match (kind, part.get("text").and_then(Value::as_str)) {
        (Some("text") | None, Some(text)) => p.part(text, marked),
        _ if kind == Some("tool_result") => {
            p.part(
                part.get("tool_use_id")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                false,
            );
            match part.get("content") {
                Some(Value::String(s)) => p.part(s, false),
                Some(Value::Array(inner)) => inner.iter().for_each(|b| content_part(p, b)),
                _ => {}
            }
            if marked {
                p.breakpoints.push(p.tokens.len());
            }
        }
        _ => p.json(part),
    }
}

/// The key a prompt is cached under: the credential and the model, as a provider separates
/// its customers' caches.
pub fn key(credential: &str, body: &Value) -> String {
    let model = body.get("model").and_then(Value::as_str).unwrap_or("");
    format!("{credential}\u{0}{model}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_reads_the_longest_prefix_it_served() {
        let c = PrefixCache::default();
        let first = json!({"messages": [{"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Hello there"}]});
        let first_use = c.account(Protocol::OpenAi, "k", &first);
        assert_eq!(first_use.read, 0);
        let second = json!({"messages": [{"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Hello there"},
            {"role": "assistant", "content": "Hi"}, {"role": "user", "content": "More"}]});
        let u = c.account(Protocol::OpenAi, "k", &second);
        assert_eq!(u.read, first_use.prompt);
        assert!(u.prompt > u.read);
        // Another key shares nothing.
        assert_eq!(c.account(Protocol::OpenAi, "other", &second).read, 0);
    }

    #[test]
    fn anthropic_caches_only_up_to_breakpoints_and_ignores_shorthand() {
        let c = PrefixCache::default();
        let plain = json!({"system": "S", "messages": [{"role": "user", "content": "a b c d"}]});
        assert_eq!(c.account(Protocol::Anthropic, "k", &plain).write, 0);
        assert_eq!(c.account(Protocol::Anthropic, "k", &plain).read, 0);
        let marked = json!({"system": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "a b c d",
                "cache_control": {"type": "ephemeral"}}]}]});
        let first = c.account(Protocol::Anthropic, "k", &marked);
        assert_eq!((first.read, first.write), (0, first.prompt));
        let next = json!({"system": [{"type": "text", "text": "S"}],
            "messages": [{"role": "user", "content": "a b c d"},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": [{"type": "text", "text": "more",
                    "cache_control": {"type": "ephemeral"}}]}]});
        let u = c.account(Protocol::Anthropic, "k", &next);
        assert_eq!(u.read, first.prompt);
        assert_eq!(u.read + u.write, u.prompt);
    }
}
