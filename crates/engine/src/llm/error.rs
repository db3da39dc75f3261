//! What a model call can fail with, worded for the person who has to fix it. Texts name the
//! model and the host only: never the key, a path or a query string.

use std::error::Error as _;

/// Upstream error messages are cut to this many characters.
const MESSAGE_LIMIT: usize = 300;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("the model `{model}` at {host} could not be reached: {reason}")]
    Network {
        model: String,
        host: String,
        reason: String,
    },
    #[error("the model `{model}` at {host} did not answer within {secs}s")]
    Timeout {
        model: String,
        host: String,
        secs: u64,
    },
    #[error("the model `{model}` at {host} answered {status}: {message}")]
    Status {
        model: String,
        host: String,
        status: u16,
        message: String,
    },
    #[error("the model `{model}` at {host} sent a reply that could not be used: {reason}")]
    Malformed {
        model: String,
        host: String,
        reason: String,
    },
}

impl LlmError {
    /// The HTTP status, for errors that carry one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// `scheme://host[:port]` of a URL: no credentials, path or query.
pub(super) fn origin(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    format!("{scheme}://{host}")
}

/// A transport error's causes, without the URL reqwest puts in its own text.
pub(crate) fn transport_reason(err: reqwest::Error) -> String {
    let err = err.without_url();
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    parts.join(": ")
}

/// The upstream's error message (`error.message` in both protocols, or a top-level
/// `message`, else the raw body), with the key masked in case the provider echoes it, cut
/// to [`MESSAGE_LIMIT`] characters.
pub(crate) fn upstream_message(body: &[u8], key: Option<&str>) -> String {
    let parsed = serde_json::from_slice::<serde_json::Value>(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/message").or_else(|| v.get("message")))
        .and_then(|m| m.as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_owned());
    let message = match key.filter(|k| !k.is_empty()) {
        Some(k) => message.replace(k, "****"),
        None => message,
    };
    if message.is_empty() {
        return "(no error message)".to_owned();
    }
    let mut chars = message.chars();
    let cut: String = chars.by_ref().take(MESSAGE_LIMIT).collect();
    if chars.next().is_some() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_drop_credentials_paths_and_queries() {
        assert_eq!(origin("https://api.x.com/v1?key=s"), "https://api.x.com");
        assert_eq!(origin("http://u:p@h:8080/v1"), "http://h:8080");
        assert_eq!(origin("http://h"), "http://h");
    }

    #[test]
    fn messages_are_masked_and_cut() {
        let body = br#"{"error":{"message":"bad key sk-secret-1"}}"#;
        assert_eq!(upstream_message(body, Some("sk-secret-1")), "bad key ****");
        assert_eq!(upstream_message(b"  plain  ", None), "plain");
        assert_eq!(upstream_message(b"", None), "(no error message)");
        let long = "é".repeat(400);
        let cut = upstream_message(long.as_bytes(), None);
        assert_eq!(cut.chars().count(), MESSAGE_LIMIT + 1);
    }
}
