//! Keeps configured secrets out of every text that came from an upstream.
//!
//! An upstream may echo what it was sent (a 401 that quotes the `Authorization` header, a proxy
//! in front of it that prints the request). Such text reaches the client, the recorded turn,
//! `status` and the logs, so each configured key is replaced before any of them sees it.

use std::borrow::Cow;

use bytes::Bytes;

use crate::config::ProxyConfig;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";
/// Shorter values are not treated as secrets: replacing them would garble ordinary text.
const MIN_SECRET_LEN: usize = 8;

#[derive(Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// Every upstream key and the proxy's own key.
    pub fn from_config(config: &ProxyConfig) -> Self {
        let mut secrets: Vec<String> = config
            .upstreams
            .iter()
            .filter_map(|u| u.api_key.clone())
            .chain(config.api_key.clone())
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        // Longest first, so a key that contains another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.secrets.iter().any(|s| text.contains(s.as_str())) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), REDACTED);
            }
        }
        Cow::Owned(out)
    }

    /// The same for a body; bytes that are not UTF-8 are searched as they are.
    pub fn bytes(&self, body: Bytes) -> Bytes {
        let hit = |s: &String| body.windows(s.len()).any(|w| w == s.as_bytes());
        if !self.secrets.iter().any(hit) {
            return body;
        }
        match std::str::from_utf8(&body) {
            Ok(text) => Bytes::from(self.text(text).into_owned()),
            Err(_) => {
                let mut out = body.to_vec();
                for s in &self.secrets {
                    out = replace_bytes(&out, s.as_bytes(), REDACTED.as_bytes());
                }
                Bytes::from(out)
            }
        }
    }
}

fn replace_bytes(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::UpstreamConfig;
    use crate::seams::Protocol;

    fn redactor() -> Redactor {
        let mut c = ProxyConfig::local(0);
        c.api_key = Some("mc-proxy-key-0123".into());
        c.upstreams = vec![UpstreamConfig {
            name: "primary".into(),
            protocol: Protocol::Openai,
            base_url: "http://x".into(),
            model: None,
            api_key: Some("sk-upstream-secret-abcdef".into()),
            extra_headers: vec![],
        }];
        Redactor::from_config(&c)
    }

    #[test]
    fn every_configured_key_is_replaced() {
        let r = redactor();
        let t = r.text("bad header: Bearer sk-upstream-secret-abcdef (client mc-proxy-key-0123)");
        assert_eq!(t, "bad header: Bearer [redacted] (client [redacted])");
        assert!(matches!(r.text("nothing here"), Cow::Borrowed(_)));
        let b = r.bytes(Bytes::from_static(b"{\"m\":\"sk-upstream-secret-abcdef\"}"));
        assert_eq!(&b[..], b"{\"m\":\"[redacted]\"}");
        let raw = r.bytes(Bytes::from_static(b"\xff sk-upstream-secret-abcdef \xfe"));
        assert_eq!(&raw[..], b"\xff [redacted] \xfe");
    }

    #[test]
    fn short_values_are_not_secrets() {
        let mut c = ProxyConfig::local(0);
        c.api_key = Some("abc".into());
        assert_eq!(Redactor::from_config(&c).text("abc abc"), "abc abc");
    }
}
