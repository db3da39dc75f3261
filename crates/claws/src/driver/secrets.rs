//! Keeping credentials out of what the driver shows: masking keys, config values and
//! free text (parser messages, command output).

use serde_json::Value;

/// `sk-…abcd`: enough to recognise a key, not enough to use it. Short keys are hidden
/// entirely.
pub fn mask(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    if chars.len() < 12 {
        return "…".to_owned();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// Whether a key's name says its value is a credential.
fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with("key")
        || n.contains("apikey")
        || n.contains("api_key")
        || n.contains("api-key")
        || n.contains("token") && !n.contains("max") && !n.contains("limit")
        || n.contains("secret")
        || n.contains("password")
        || n.contains("passwd")
        || n.contains("authorization")
        || n.contains("credential")
}

fn looks_like_key(s: &str) -> bool {
    // `mc-`: MetaClaw's own proxy keys.
    s.len() >= 16 && (s.starts_with("sk-") || s.starts_with("sk_") || s.starts_with("mc-"))
}

/// `v` with every credential masked: values under secret-looking names, the known
/// secrets (MetaClaw's proxy key) and strings shaped like provider keys.
pub(super) fn masked(name: Option<&str>, v: &Value, known: &[&str]) -> Value {
    match v {
        Value::String(s) => {
            let secret = name.is_some_and(secret_name)
                || known.iter().any(|k| !k.is_empty() && s.contains(k))
                || looks_like_key(s);
            if secret {
                Value::String(mask(s))
            } else {
                v.clone()
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| masked(name, i, known)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, i)| (k.clone(), masked(Some(k), i, known)))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// Text (a parser's message, a command's output) with credentials masked.
pub(super) fn scrub(text: &str, known: &[&str]) -> String {
    let mut out = text.to_owned();
    for k in known.iter().filter(|k| !k.is_empty()) {
        out = out.replace(k, &mask(k));
    }
    let words: Vec<String> = out
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '=' | ':'))
        .filter(|w| looks_like_key(w))
        .map(str::to_owned)
        .collect();
    for w in words {
        out = out.replace(&w, &mask(&w));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use serde_json::json;

    #[test]
    fn mask_keeps_a_recognisable_hint_only() {
        assert_eq!(mask("sk-proj-abcdefghijklmnop"), "sk-…mnop");
        assert_eq!(mask("short"), "…");
        assert_eq!(mask(""), "");
    }

    #[test]
    fn masked_hides_credentials_at_any_depth() {
        let v = json!({
            "baseUrl": "http://127.0.0.1:30000/v1",
            "apiKey": "metaclaw-proxy-key-123456",
            "headers": {"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz"},
            "note": "sk-ant-0123456789abcdef",
            "maxTokens": 8192,
        });
        let m = masked(Some("provider"), &v, &["metaclaw-proxy-key-123456"]);
        let s = m.to_string();
        assert!(!s.contains("metaclaw-proxy-key-123456"));
        assert!(!s.contains("abcdefghijklmnopqrstuvwxyz"));
        assert!(!s.contains("sk-ant-0123456789abcdef"));
        assert!(s.contains("http://127.0.0.1:30000/v1"));
        assert!(s.contains("8192"));
    }

    #[test]
    fn scrub_masks_known_and_key_shaped_words() {
        let s = scrub(
            "line 3: api_key = \"sk-live-0123456789abcdef\" near mine-secret-value",
            &["mine-secret-value"],
        );
        assert!(!s.contains("sk-live-0123456789abcdef"));
        assert!(!s.contains("mine-secret-value"));
    }
}
