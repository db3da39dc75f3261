//! The words of a failed test: the host (never the URL), the provider's own message with
//! the key masked, a transport error's causes, a short sample of model ids.

use std::error::Error as _;

use serde_json::Value;

/// Model ids named in a "not offered" sentence.
const MODELS_IN_SENTENCE: usize = 10;
/// Provider messages are cut to this many characters.
const MESSAGE_LIMIT: usize = 300;

/// Up to [`MODELS_IN_SENTENCE`] ids, and how many more there are.
pub(super) fn sample(ids: &[String]) -> String {
    if ids.is_empty() {
        return "none listed".into();
    }
    let shown = ids
        .iter()
        .take(MODELS_IN_SENTENCE)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    match ids.len().saturating_sub(MODELS_IN_SENTENCE) {
        0 => shown,
        more => format!("{shown} … ({more} more)"),
    }
}

/// `error.message` (both protocols), else the raw body; the key masked in case the provider
/// echoes it, cut to [`MESSAGE_LIMIT`] characters.
pub(super) fn provider_message(body: &Value, bytes: &[u8], key: Option<&str>) -> String {
    let message = body
        .pointer("/error/message")
        .or_else(|| body.get("message"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| String::from_utf8_lossy(bytes).trim().to_owned());
    let message = match key {
        Some(k) => message.replace(k, "****"),
        None => message,
    };
    if message.is_empty() {
        return "(no error message)".into();
    }
    let mut chars = message.chars();
    let cut: String = chars.by_ref().take(MESSAGE_LIMIT).collect();
    if chars.next().is_some() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// A transport error's causes, without the URL reqwest puts in its own text.
pub(super) fn causes(err: reqwest::Error) -> String {
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

/// `host[:port]` of an http(s) URL; `None` for anything else.
pub fn host_of(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?;
    Some(match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    })
}
