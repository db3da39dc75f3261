//! Reads the session id, turn type, end signal and memory scope of a request
//! (docs/http-api.md, Headers and body fields).

use axum::http::HeaderMap;
use serde_json::{Map, Value};

use super::fingerprint;
use crate::seams::{Protocol, TurnType};

/// Body fields that only MetaClaw understands; removed before forwarding.
const PRIVATE_FIELDS: [&str; 7] = [
    "session_id",
    "session_done",
    "turn_type",
    "memory_scope",
    "user_id",
    "workspace_id",
    "agent_id",
];

/// Where the session id came from; useful in logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionSource {
    Header,
    ClaudeCodeHeader,
    AnthropicMetadata,
    Body,
    Fingerprint,
}

#[derive(Debug, Clone)]
pub struct RequestMeta {
    pub session_id: String,
    pub source: SessionSource,
    pub turn_type: TurnType,
    pub done: bool,
    pub scope: String,
}

/// Resolves the request's session data and strips MetaClaw's private fields from `body`.
pub fn resolve(
    protocol: Protocol,
    headers: &HeaderMap,
    body: &mut Map<String, Value>,
    default_scope: &str,
) -> RequestMeta {
    let mut private = Map::new();
    for key in PRIVATE_FIELDS {
        if let Some(v) = body.remove(key) {
            private.insert(key.to_string(), v);
        }
    }
    let (session_id, source) = session_id(protocol, headers, body, &private);
    let turn_type = match header_or_field(headers, "x-turn-type", &private, "turn_type")
        .map(|v| v.trim().to_ascii_lowercase())
    {
        Some(v) if v != "main" && !v.is_empty() => TurnType::Side,
        _ => TurnType::Main,
    };
    let done = header_or_field(headers, "x-session-done", &private, "session_done")
        .is_some_and(|v| truthy(&v));
    let scope = scope(headers, &private, default_scope);
    RequestMeta {
        session_id,
        source,
        turn_type,
        done,
        scope,
    }
}

fn session_id(
    protocol: Protocol,
    headers: &HeaderMap,
    body: &Map<String, Value>,
    private: &Map<String, Value>,
) -> (String, SessionSource) {
    if let Some(id) = header(headers, "x-session-id") {
        return (id, SessionSource::Header);
    }
    if let Some(id) = header(headers, "x-claude-code-session-id") {
        return (id, SessionSource::ClaudeCodeHeader);
    }
    if protocol == Protocol::Anthropic
        && let Some(id) = metadata_session_id(body)
    {
        return (id, SessionSource::AnthropicMetadata);
    }
    if let Some(id) = private.get("session_id").and_then(scalar_string) {
        return (id, SessionSource::Body);
    }
    (
        fingerprint::of_conversation(protocol, body),
        SessionSource::Fingerprint,
    )
}

/// Claude Code puts a JSON string in `metadata.user_id` that carries `session_id`.
fn metadata_session_id(body: &Map<String, Value>) -> Option<String> {
    let user_id = body.get("metadata")?.get("user_id")?.as_str()?;
    let parsed: Value = serde_json::from_str(user_id).ok()?;
    parsed
        .get("session_id")
        .and_then(scalar_string)
        .filter(|s| !s.is_empty())
}

fn scope(headers: &HeaderMap, private: &Map<String, Value>, default_scope: &str) -> String {
    if let Some(s) = header_or_field(headers, "x-memory-scope", private, "memory_scope") {
        return clean(&s);
    }
    let parts: Vec<String> = [
        ("user", "x-user-id", "user_id"),
        ("workspace", "x-workspace-id", "workspace_id"),
        ("agent", "x-agent-id", "agent_id"),
    ]
    .iter()
    .filter_map(|(label, h, f)| {
        header_or_field(headers, h, private, f).map(|v| format!("{label}:{}", clean(&v)))
    })
    .collect();
    if parts.is_empty() {
        default_scope.to_string()
    } else {
        parts.join("|")
    }
}

/// Scopes end up in logs and SQL rows; line breaks would forge log lines.
fn clean(s: &str) -> String {
    s.trim().replace(['\r', '\n'], " ")
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

fn header_or_field(
    headers: &HeaderMap,
    name: &str,
    private: &Map<String, Value>,
    field: &str,
) -> Option<String> {
    header(headers, name).or_else(|| private.get(field).and_then(scalar_string))
}

fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn header_wins_over_everything() {
        let mut h = HeaderMap::new();
        h.insert("x-session-id", "s1".parse().unwrap());
        h.insert("x-claude-code-session-id", "cc".parse().unwrap());
        let mut b = body(json!({"session_id": "b", "messages": []}));
        let m = resolve(Protocol::Openai, &h, &mut b, "default");
        assert_eq!(m.session_id, "s1");
        assert_eq!(m.source, SessionSource::Header);
        assert!(!b.contains_key("session_id"), "private field stripped");
    }

    #[test]
    fn claude_code_header_then_metadata_then_body() {
        let mut h = HeaderMap::new();
        h.insert("x-claude-code-session-id", "cc-1".parse().unwrap());
        let mut b = body(json!({"messages": []}));
        assert_eq!(
            resolve(Protocol::Anthropic, &h, &mut b, "d").session_id,
            "cc-1"
        );

        let mut b = body(json!({
            "metadata": {"user_id": "{\"device_id\":\"x\",\"session_id\":\"meta-7\"}"},
            "session_id": "body-1",
            "messages": []
        }));
        let m = resolve(Protocol::Anthropic, &HeaderMap::new(), &mut b, "d");
        assert_eq!(m.session_id, "meta-7");
        assert_eq!(m.source, SessionSource::AnthropicMetadata);
        assert!(
            b.contains_key("metadata"),
            "metadata is forwarded untouched"
        );

        let mut b = body(json!({"session_id": "body-1", "messages": []}));
        let m = resolve(Protocol::Openai, &HeaderMap::new(), &mut b, "d");
        assert_eq!(
            (m.session_id.as_str(), m.source),
            ("body-1", SessionSource::Body)
        );
    }

    #[test]
    fn metadata_user_id_that_is_not_json_falls_back_to_fingerprint() {
        let mut b = body(
            json!({"metadata": {"user_id": "user_abc"}, "messages": [{"role":"user","content":"hi"}]}),
        );
        let m = resolve(Protocol::Anthropic, &HeaderMap::new(), &mut b, "d");
        assert_eq!(m.source, SessionSource::Fingerprint);
    }

    #[test]
    fn turn_type_defaults_to_main_and_reads_side() {
        let mut b = body(json!({"messages": []}));
        assert_eq!(
            resolve(Protocol::Openai, &HeaderMap::new(), &mut b, "d").turn_type,
            TurnType::Main
        );
        let mut h = HeaderMap::new();
        h.insert("x-session-id", "s".parse().unwrap());
        h.insert("x-turn-type", "Side".parse().unwrap());
        let mut b = body(json!({"messages": []}));
        assert_eq!(
            resolve(Protocol::Openai, &h, &mut b, "d").turn_type,
            TurnType::Side
        );
        let mut b = body(json!({"turn_type": "heartbeat", "messages": []}));
        assert_eq!(
            resolve(Protocol::Openai, &HeaderMap::new(), &mut b, "d").turn_type,
            TurnType::Side
        );
    }

    #[test]
    fn done_signal_from_header_or_body() {
        let mut h = HeaderMap::new();
        h.insert("x-session-done", "TRUE".parse().unwrap());
        let mut b = body(json!({"messages": []}));
        assert!(resolve(Protocol::Openai, &h, &mut b, "d").done);
        let mut b = body(json!({"session_done": true, "messages": []}));
        assert!(resolve(Protocol::Openai, &HeaderMap::new(), &mut b, "d").done);
        let mut b = body(json!({"session_done": "no", "messages": []}));
        assert!(!resolve(Protocol::Openai, &HeaderMap::new(), &mut b, "d").done);
    }

    #[test]
    fn scope_rules() {
        let mut h = HeaderMap::new();
        h.insert("x-user-id", "ann".parse().unwrap());
        h.insert("x-workspace-id", "proj".parse().unwrap());
        let mut b = body(json!({"messages": []}));
        assert_eq!(
            resolve(Protocol::Openai, &h, &mut b, "d").scope,
            "user:ann|workspace:proj"
        );
        h.insert("x-memory-scope", "team".parse().unwrap());
        assert_eq!(resolve(Protocol::Openai, &h, &mut b, "d").scope, "team");
        let mut b = body(json!({"messages": []}));
        assert_eq!(
            resolve(Protocol::Openai, &HeaderMap::new(), &mut b, "mine").scope,
            "mine"
        );
        let mut b = body(json!({"memory_scope": "a\nb", "messages": []}));
        assert_eq!(
            resolve(Protocol::Openai, &HeaderMap::new(), &mut b, "d").scope,
            "a b"
        );
    }
}
