//! The words of a failed test: the host (never the URL), the provider's own message with
//! the key masked, a transport error's causes, a short sample of model ids.

/// Model ids named in a "not offered" sentence.
const MODELS_IN_SENTENCE: usize = 10;

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

/// The provider's own message and a transport error's causes are worded as for the proxy's
/// upstream errors.
pub(super) use crate::llm::error::{transport_reason as causes, upstream_message};

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
