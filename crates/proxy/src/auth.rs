//! The agent key check (constant time) and the Host check against DNS rebinding.

use axum::http::{HeaderMap, StatusCode, header};
use subtle::ConstantTimeEq;

use crate::error::{ApiError, ErrorKind};
use crate::seams::Protocol;

/// [`key_ok`] as a 401 in the route's error shape.
pub fn require_key(
    protocol: Protocol,
    headers: &HeaderMap,
    expected: Option<&str>,
) -> Result<(), ApiError> {
    key_ok(headers, expected).map_err(|msg| {
        ApiError::new(
            protocol,
            StatusCode::UNAUTHORIZED,
            ErrorKind::Authentication,
            msg,
        )
    })
}

/// The token of `Authorization: Bearer <token>`; the scheme name is case-insensitive
/// (RFC 9110 §11.1), so `bearer` and `BEARER` work too. The admin API uses the same rule.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Checks `Authorization: Bearer <key>` or `x-api-key: <key>` against the proxy key.
pub fn key_ok(headers: &HeaderMap, expected: Option<&str>) -> Result<(), &'static str> {
    let Some(expected) = expected else {
        return Ok(());
    };
    let bearer = bearer_token(headers);
    let x_api_key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    let presented = [bearer, x_api_key];
    if presented.iter().all(Option::is_none) {
        return Err(
            "missing API key: send the MetaClaw proxy key as `Authorization: Bearer <key>` or `x-api-key`",
        );
    }
    let matched = presented
        .iter()
        .flatten()
        .any(|k| bool::from(k.as_bytes().ct_eq(expected.as_bytes())));
    if matched {
        Ok(())
    } else {
        Err(
            "invalid API key: this is not the MetaClaw proxy key (give the agent the key you set with `metaclaw config set proxy.api_key`)",
        )
    }
}

/// Accepts loopback names, the configured bind host and extra allowed hosts, with any port.
/// A request without a Host header (HTTP/1.0 tools) cannot be a browser rebinding attack.
pub fn host_ok(headers: &HeaderMap, bind_host: &str, allowed: &[String]) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return headers.get(header::HOST).is_none();
    };
    let name = strip_port(host).to_ascii_lowercase();
    matches!(name.as_str(), "localhost" | "127.0.0.1" | "[::1]" | "::1")
        || name == bind_host.to_ascii_lowercase()
        || allowed.iter().any(|a| a.eq_ignore_ascii_case(&name))
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        // [::1]:30000
        return match host.find(']') {
            Some(end) => &host[..=end],
            None => host,
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.insert(*k, v.parse().unwrap());
        }
        m
    }

    #[test]
    fn key_accepted_from_either_header() {
        assert!(key_ok(&h(&[("authorization", "Bearer k1")]), Some("k1")).is_ok());
        assert!(key_ok(&h(&[("authorization", "BEARER  k1 ")]), Some("k1")).is_ok());
        assert!(key_ok(&h(&[("authorization", "Basic k1")]), Some("k1")).is_err());
        assert_eq!(bearer_token(&h(&[("authorization", "bearer ")])), None);
        assert!(key_ok(&h(&[("x-api-key", "k1")]), Some("k1")).is_ok());
        assert!(
            key_ok(
                &h(&[("x-api-key", "nope"), ("authorization", "Bearer k1")]),
                Some("k1")
            )
            .is_ok()
        );
        assert!(key_ok(&h(&[("authorization", "Bearer k2")]), Some("k1")).is_err());
        assert!(key_ok(&h(&[]), Some("k1")).is_err());
        assert!(key_ok(&h(&[]), None).is_ok());
    }

    #[test]
    fn host_check() {
        assert!(host_ok(
            &h(&[("host", "127.0.0.1:30000")]),
            "127.0.0.1",
            &[]
        ));
        assert!(host_ok(&h(&[("host", "localhost")]), "127.0.0.1", &[]));
        assert!(host_ok(&h(&[("host", "[::1]:30000")]), "127.0.0.1", &[]));
        assert!(!host_ok(
            &h(&[("host", "evil.example:30000")]),
            "127.0.0.1",
            &[]
        ));
        assert!(host_ok(
            &h(&[("host", "box.lan:30000")]),
            "0.0.0.0",
            &["box.lan".to_string()]
        ));
        assert!(host_ok(&h(&[]), "127.0.0.1", &[]));
    }
}
