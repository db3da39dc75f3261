//! The HTTP layer shared by the backend clients: the key header, JSON bodies, retries with
//! back-off for connection errors and 5xx on requests that are safe to resend, waiting out
//! 429 back-pressure, cancellation, and error mapping that never leaks the key.

use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::{LearnError, scrub};
use crate::retry::{RetryPolicy, random_key};

/// Whether a request may be sent again after a connection error or a 5xx, when it is not
/// known whether the server acted on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// Reads, polls, heartbeats, and submissions the server deduplicates (same
    /// `X-Idempotency-Key` and sequence id on every attempt).
    Safe,
    /// Submissions a duplicate could run twice: sent once (a 429 is still waited out, since
    /// the server refused it before doing anything).
    Once,
}

/// An HTTP answer the caller interprets (2xx, and 4xx other than 401/403/429).
#[derive(Debug)]
pub(crate) struct Raw {
    pub status: StatusCode,
    pub body: String,
    pub headers: HeaderMap,
}

impl Raw {
    pub fn json(&self) -> Value {
        if self.body.trim().is_empty() {
            return Value::Null;
        }
        serde_json::from_str(&self.body).unwrap_or(Value::String(self.body.clone()))
    }
}

pub(crate) struct Http {
    client: reqwest::Client,
    base: String,
    pub backend: &'static str,
    key_header: HeaderName,
    /// The configured key; never logged, scrubbed from every message.
    api_key: String,
    /// The credential sent (the key, or a JWT exchanged for it).
    credential: RwLock<String>,
    /// Whether `credential` is a JWT from `/api/v1/auth/token` (renewed after a 401 that
    /// says the token is invalid).
    jwt: AtomicBool,
    pub policy: RetryPolicy,
    pub cancel: CancellationToken,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("backend", &self.backend)
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Http {
    pub fn new(
        backend: &'static str,
        base_url: &str,
        key_header: &'static str,
        api_key: &str,
        policy: RetryPolicy,
    ) -> Result<Self, LearnError> {
        let base = base_url.trim().trim_end_matches('/').to_owned();
        let parsed = reqwest::Url::parse(&base)
            .map_err(|e| LearnError::invalid("base URL", format!("`{base}`: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(LearnError::invalid(
                "base URL",
                format!("`{base}` is not http(s)"),
            ));
        }
        if api_key.trim().is_empty() {
            return Err(LearnError::invalid(
                "API key",
                format!("no {backend} API key is configured"),
            ));
        }
        if HeaderValue::from_str(api_key.trim()).is_err() {
            return Err(LearnError::invalid(
                "API key",
                "it contains characters not allowed in a header",
            ));
        }
        let client = reqwest::Client::builder()
            .timeout(policy.request_timeout)
            .connect_timeout(policy.connect_timeout)
            .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LearnError::invalid("HTTP client", e.to_string()))?;
        Ok(Self {
            client,
            base,
            backend,
            key_header: HeaderName::from_static(key_header),
            api_key: api_key.trim().to_owned(),
            credential: RwLock::new(api_key.trim().to_owned()),
            jwt: AtomicBool::new(false),
            policy,
            cancel: CancellationToken::new(),
        })
    }

    /// Exchanges the API key for a JWT (`POST /api/v1/auth/token`) and sends the JWT from
    /// then on.
    pub async fn exchange_jwt(&self) -> Result<(), LearnError> {
        let op = "exchanging the API key for a token";
        self.set_credential(self.api_key.clone());
        let raw = self
            .send_once(&Method::POST, "/api/v1/auth/token", Some(&json!({})), &[])
            .await
            .map_err(|e| self.network(op, &e))?;
        if raw.status == StatusCode::UNAUTHORIZED || raw.status == StatusCode::FORBIDDEN {
            return Err(LearnError::Auth {
                backend: self.backend,
                op: op.to_owned(),
                status: raw.status.as_u16(),
            });
        }
        if !raw.status.is_success() {
            return Err(self.error(op, &raw));
        }
        let jwt = raw
            .json()
            .get("jwt")
            .and_then(Value::as_str)
            .filter(|j| !j.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| LearnError::Backend {
                backend: self.backend,
                op: op.to_owned(),
                status: None,
                message: "unexpected answer: no jwt".to_owned(),
            })?;
        self.set_credential(jwt);
        self.jwt.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn set_credential(&self, credential: String) {
        if let Ok(mut c) = self.credential.write() {
            *c = credential;
        }
    }

    fn credential(&self) -> String {
        self.credential
            .read()
            .map(|c| c.clone())
            .unwrap_or_else(|_| self.api_key.clone())
    }

    pub fn scrub(&self, text: &str) -> String {
        scrub(&scrub(text, &self.api_key), &self.credential())
    }

    /// Sleeps unless the client is shut down first.
    pub async fn pause(&self, op: &str, d: Duration) -> Result<(), LearnError> {
        tokio::select! {
            () = self.cancel.cancelled() => Err(self.cancelled(op)),
            () = tokio::time::sleep(d) => Ok(()),
        }
    }

    pub fn cancelled(&self, op: &str) -> LearnError {
        LearnError::Cancelled {
            backend: self.backend,
            op: op.to_owned(),
        }
    }

    async fn send_once(
        &self,
        method: &Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&'static str, String)],
    ) -> Result<Raw, reqwest::Error> {
        let url = format!("{}{}", self.base, path);
        let mut req = self
            .client
            .request(method.clone(), url)
            .header(self.key_header.clone(), self.credential());
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = resp.text().await?;
        Ok(Raw {
            status,
            body,
            headers,
        })
    }

    /// Sends a request with the retry rules of `resend`. Returns 2xx and the 4xx the caller
    /// interprets; 401/403 become [`LearnError::Auth`]; 5xx and connection errors left after
    /// the retries become errors. POSTs carry one `X-Idempotency-Key` across all attempts.
    pub async fn send(
        &self,
        op: &str,
        method: Method,
        path: &str,
        body: Option<&Value>,
        extra: &[(&'static str, String)],
        resend: Resend,
    ) -> Result<Raw, LearnError> {
        let mut headers: Vec<(&'static str, String)> = extra.to_vec();
        if method != Method::GET {
            headers.push(("x-idempotency-key", random_key()));
        }
        let mut failures = 0u32;
        let mut limited = 0u32;
        let mut reauthed = false;
        loop {
            if self.cancel.is_cancelled() {
                return Err(self.cancelled(op));
            }
            let attempt = tokio::select! {
                () = self.cancel.cancelled() => return Err(self.cancelled(op)),
                r = self.send_once(&method, path, body, &headers) => r,
            };
            let may_resend = resend == Resend::Safe && failures < self.policy.max_retries;
            match attempt {
                Err(e) => {
                    if !may_resend {
                        return Err(self.network(op, &e));
                    }
                    tracing::warn!(backend = self.backend, op, error = %self.scrub(&e.to_string()), "request failed; retrying");
                }
                Ok(raw)
                    if raw.status == StatusCode::UNAUTHORIZED
                        && !reauthed
                        && self.jwt.load(Ordering::SeqCst)
                        && token_invalid(&raw.headers) =>
                {
                    // The JWT expired: get a new one and replay the request once.
                    reauthed = true;
                    self.exchange_jwt().await?;
                    continue;
                }
                Ok(raw)
                    if raw.status == StatusCode::UNAUTHORIZED
                        || raw.status == StatusCode::FORBIDDEN =>
                {
                    return Err(LearnError::Auth {
                        backend: self.backend,
                        op: op.to_owned(),
                        status: raw.status.as_u16(),
                    });
                }
                Ok(raw) if raw.status == StatusCode::TOO_MANY_REQUESTS => {
                    if limited >= self.policy.max_rate_limited {
                        return Err(self.error(op, &raw));
                    }
                    let wait = retry_after(&raw.headers)
                        .unwrap_or(self.policy.default_retry_after)
                        .min(self.policy.max_retry_after);
                    tracing::info!(
                        backend = self.backend,
                        op,
                        wait_ms = wait.as_millis() as u64,
                        "backend is busy (429); waiting"
                    );
                    limited += 1;
                    self.pause(op, wait).await?;
                    continue;
                }
                Ok(raw)
                    if raw.status.is_server_error()
                        && should_retry(&raw.headers) != Some(false) =>
                {
                    if !may_resend {
                        return Err(self.error(op, &raw));
                    }
                    tracing::warn!(
                        backend = self.backend,
                        op,
                        status = raw.status.as_u16(),
                        "backend error; retrying"
                    );
                }
                Ok(raw) => return Ok(raw),
            }
            let delay = self.policy.backoff(failures);
            failures += 1;
            self.pause(op, delay).await?;
        }
    }

    /// [`Self::send`] for calls answered directly: a 2xx JSON body, anything else an error.
    pub async fn call(
        &self,
        op: &str,
        method: Method,
        path: &str,
        body: Option<&Value>,
        resend: Resend,
    ) -> Result<Value, LearnError> {
        let raw = self.send(op, method, path, body, &[], resend).await?;
        if raw.status.is_success() {
            Ok(raw.json())
        } else {
            Err(self.error(op, &raw))
        }
    }

    pub fn network(&self, op: &str, e: &reqwest::Error) -> LearnError {
        if e.is_timeout() {
            return LearnError::TimedOut {
                backend: self.backend,
                op: op.to_owned(),
                after: self.policy.request_timeout,
            };
        }
        let mut detail = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            detail.push_str(": ");
            detail.push_str(&s.to_string());
            src = s.source();
        }
        LearnError::Network {
            backend: self.backend,
            op: op.to_owned(),
            detail: self.scrub(&detail),
        }
    }

    /// An error answer, with the backend's own message (scrubbed of the key).
    pub fn error(&self, op: &str, raw: &Raw) -> LearnError {
        let message = error_message(&raw.json());
        let message = if message.is_empty() {
            raw.status
                .canonical_reason()
                .unwrap_or("no error message")
                .to_owned()
        } else {
            message
        };
        LearnError::Backend {
            backend: self.backend,
            op: op.to_owned(),
            status: Some(raw.status.as_u16()),
            message: self.scrub(&message),
        }
    }
}

/// The most specific message in an error body (`error.message`, `error`, `detail`,
/// `message`), or the raw text, shortened.
pub(crate) fn error_message(body: &Value) -> String {
    let pick = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Value::Object(_) => v.get("message").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        }
    };
    let found = ["error", "detail", "message", "error_message"]
        .iter()
        .find_map(|k| body.get(*k).and_then(pick))
        .or_else(|| body.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut s: String = found.chars().take(500).collect();
    if found.chars().count() > 500 {
        s.push('…');
    }
    s
}

/// `Retry-After` in seconds (fractions allowed), or `retry-after-ms`.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// A 401 whose `WWW-Authenticate` says the bearer token is invalid (expired JWT).
fn token_invalid(headers: &HeaderMap) -> bool {
    headers
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("invalid_token"))
}

/// The server's `x-should-retry` override, when present.
fn should_retry(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()? {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}
