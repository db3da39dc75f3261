//! "Test connection": the cheapest request that proves the base URL answers, the key is
//! accepted and the model exists — the model list, else a one-token completion.
//!
//! Error texts name the host only. The key never appears in them: it is held as a
//! [`Secret`], sent only in a header, and masked out of anything the provider echoes.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use super::text::{causes, host_of, sample, upstream_message};
use crate::config::LlmApi;
use crate::secrets::Secret;

/// What a test may take, in total.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Model ids returned with a result; providers like OpenRouter list hundreds.
pub const MODELS_CAP: usize = 50;
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// What to test. `Debug` shows the key as `Secret(****)`.
#[derive(Debug, Clone)]
pub struct Target {
    /// As configured: OpenAI-compatible bases include `/v1` (or their own prefix),
    /// Anthropic bases usually do not.
    pub api_base: String,
    pub api: LlmApi,
    /// Empty: only the connection and the key are checked.
    pub model: String,
    pub api_key: Option<Secret>,
    pub extra_headers: Vec<(String, String)>,
    /// A path under the base that answers only with a valid key, checked first where the
    /// model list is public (see [`key_check_path`]).
    pub key_check: Option<String>,
    pub timeout: Duration,
}

/// How the connection was proven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// The model list answered.
    Models,
    /// A one-token request answered.
    Completion,
}

#[derive(Debug, Clone, Serialize)]
pub struct Connected {
    pub checked: Check,
    /// `None` when no list was available or no model was given.
    pub model_listed: Option<bool>,
    /// The first [`MODELS_CAP`] listed ids.
    pub models: Vec<String>,
    pub models_total: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The provider refused the key (401/403), or one is needed and none was given.
    Auth,
    /// DNS, connection refused, TLS, timeout.
    Network,
    /// The model is not offered.
    Model,
    /// Any other answer: status and the provider's message.
    Other,
}

/// A failed test, in a sentence for the person who has to fix it.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct ProbeError {
    pub kind: ErrorKind,
    pub message: String,
    /// The HTTP status, when the provider answered.
    pub status: Option<u16>,
}

/// A test's outcome as the admin API answers it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub ok: bool,
    pub latency_ms: u64,
    #[serde(flatten)]
    pub connected: Option<Connected>,
    pub error: Option<ProbeError>,
}

/// Runs [`probe`] and times it.
pub async fn test_connection(http: &reqwest::Client, target: &Target) -> Report {
    let started = Instant::now();
    let result = probe(http, target).await;
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match result {
        Ok(c) => Report {
            ok: true,
            latency_ms,
            connected: Some(c),
            error: None,
        },
        Err(e) => Report {
            ok: false,
            latency_ms,
            connected: None,
            error: Some(e),
        },
    }
}

/// Tests `target`, within `target.timeout` in total.
pub async fn probe(http: &reqwest::Client, target: &Target) -> Result<Connected, ProbeError> {
    let host = host_of(&target.api_base).ok_or_else(|| ProbeError {
        kind: ErrorKind::Other,
        message: "the base URL is not an http(s) URL".into(),
        status: None,
    })?;
    let probe = Probe { http, target, host };
    let secs = target.timeout.as_secs_f64();
    match tokio::time::timeout(target.timeout, probe.run()).await {
        Ok(result) => result,
        Err(_) => Err(probe.network(format!("no answer within {secs} s"))),
    }
}

struct Probe<'a> {
    http: &'a reqwest::Client,
    target: &'a Target,
    /// `host[:port]`, the only part of the URL errors name.
    host: String,
}

/// A provider's answer.
struct Answer {
    status: u16,
    body: Value,
    /// `error.message` (or the raw body), key masked, cut.
    message: String,
}

impl Probe<'_> {
    async fn run(&self) -> Result<Connected, ProbeError> {
        if let Some(path) = &self.target.key_check {
            let answer = self
                .send(reqwest::Method::GET, &self.url(path), None)
                .await?;
            if matches!(answer.status, 401 | 403) {
                return Err(self.refused(&answer, false));
            }
        }
        let listed = self
            .send(reqwest::Method::GET, &self.models_url(), None)
            .await?;
        let models = match listed.status {
            200..=299 => model_ids(&listed.body),
            // No list here: many compatible servers lack the route. Ask the model instead.
            404 | 405 => None,
            _ => return Err(self.refused(&listed, false)),
        };
        let model = self.target.model.trim();
        let Some(ids) = models else {
            if model.is_empty() {
                return Err(ProbeError {
                    kind: ErrorKind::Model,
                    message: format!(
                        "{} does not list its models; name a model to test the connection",
                        self.host
                    ),
                    status: Some(listed.status),
                });
            }
            return self.one_token(model, None).await;
        };
        let listed = !model.is_empty() && ids.iter().any(|id| id.eq_ignore_ascii_case(model));
        if model.is_empty() || listed {
            return Ok(connected(
                Check::Models,
                (!model.is_empty()).then_some(true),
                ids,
            ));
        }
        // Some lists leave out aliases (Anthropic's lists dated ids only) or models served on
        // request: only the model's own answer says it is not offered.
        self.one_token(model, Some(ids)).await
    }

    async fn one_token(
        &self,
        model: &str,
        listed: Option<Vec<String>>,
    ) -> Result<Connected, ProbeError> {
        let (path, body) = match self.target.api {
            LlmApi::Openai => (
                "chat/completions",
                json!({
                    "model": model,
                    "messages": [{ "role": "user", "content": "ping" }],
                    "max_tokens": 1,
                    "stream": false,
                }),
            ),
            LlmApi::Anthropic => (
                "messages",
                json!({
                    "model": model,
                    "max_tokens": 1,
                    "messages": [{ "role": "user", "content": "ping" }],
                }),
            ),
        };
        let answer = self
            .send(reqwest::Method::POST, &self.url(path), Some(body))
            .await?;
        let model_listed = listed.as_ref().map(|_| false);
        if (200..300).contains(&answer.status) {
            let ids = listed.unwrap_or_default();
            return Ok(connected(Check::Completion, model_listed, ids));
        }
        if is_model_error(&answer) {
            let message = match &listed {
                Some(ids) => format!("model {model} is not offered; available: {}", sample(ids)),
                None => format!(
                    "model {model} is not offered by {}: {}",
                    self.host, answer.message
                ),
            };
            return Err(ProbeError {
                kind: ErrorKind::Model,
                message,
                status: Some(answer.status),
            });
        }
        Err(self.refused(&answer, true))
    }

    /// A non-2xx answer as an error: `auth` for 401/403, `other` otherwise.
    fn refused(&self, answer: &Answer, completion: bool) -> ProbeError {
        let (status, host, said) = (answer.status, &self.host, &answer.message);
        let no_key = (self.target.api_key.as_ref()).is_none_or(|k| k.expose().is_empty());
        let (kind, message) = match status {
            401 | 403 if no_key => (
                ErrorKind::Auth,
                format!("the provider wants an API key (HTTP {status} from {host}): {said}"),
            ),
            401 | 403 => (
                ErrorKind::Auth,
                format!("the provider refused the key (HTTP {status} from {host}): {said}"),
            ),
            404 if completion => (
                ErrorKind::Other,
                format!("{host} answered HTTP 404: {said} (check the base URL)"),
            ),
            _ => (
                ErrorKind::Other,
                format!("{host} answered HTTP {status}: {said}"),
            ),
        };
        ProbeError {
            kind,
            message,
            status: Some(status),
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        url: &str,
        body: Option<Value>,
    ) -> Result<Answer, ProbeError> {
        let t = self.target;
        let mut req = self.http.request(method, url).timeout(t.timeout);
        let key = t
            .api_key
            .as_ref()
            .map(Secret::expose)
            .filter(|k| !k.is_empty());
        req = match (t.api, key) {
            (LlmApi::Openai, Some(k)) => req.bearer_auth(k),
            (LlmApi::Openai, None) => req,
            (LlmApi::Anthropic, k) => {
                let req = req.header("anthropic-version", ANTHROPIC_VERSION);
                match k {
                    Some(k) => req.header("x-api-key", k),
                    None => req,
                }
            }
        };
        for (name, value) in &t.extra_headers {
            req = req.header(name, value);
        }
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let resp = req.send().await.map_err(|e| self.transport(e))?;
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await.map_err(|e| self.transport(e))?;
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Ok(Answer {
            status,
            message: upstream_message(&bytes, key),
            body,
        })
    }

    fn transport(&self, err: reqwest::Error) -> ProbeError {
        if err.is_timeout() {
            let secs = self.target.timeout.as_secs_f64();
            return self.network(format!("no answer within {secs} s"));
        }
        self.network(causes(err))
    }

    fn network(&self, reason: String) -> ProbeError {
        ProbeError {
            kind: ErrorKind::Network,
            message: format!("cannot reach {}: {reason}", self.host),
            status: None,
        }
    }

    fn models_url(&self) -> String {
        match self.target.api {
            // Anthropic pages its list (20 by default); one page of everything is enough.
            LlmApi::Anthropic => format!("{}?limit=1000", self.url("models")),
            LlmApi::Openai => self.url("models"),
        }
    }

    /// `{base}/{path}`; Anthropic bases get `/v1` unless they have it, as in the proxy.
    fn url(&self, path: &str) -> String {
        let base = self.target.api_base.trim().trim_end_matches('/');
        match self.target.api {
            LlmApi::Anthropic if !base.ends_with("/v1") => format!("{base}/v1/{path}"),
            _ => format!("{base}/{path}"),
        }
    }
}

fn connected(checked: Check, model_listed: Option<bool>, ids: Vec<String>) -> Connected {
    let models_total = ids.len();
    Connected {
        checked,
        model_listed,
        models: ids.into_iter().take(MODELS_CAP).collect(),
        models_total,
    }
}

/// `data[].id`, the list shape of both protocols; `None` when the body has no such list.
fn model_ids(body: &Value) -> Option<Vec<String>> {
    let data = body.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
    )
}

/// A 404 or 400 whose error is about the model (`model_not_found`, "The model `x` does not
/// exist", Anthropic's `not_found_error` "model: x").
fn is_model_error(answer: &Answer) -> bool {
    if !matches!(answer.status, 400 | 404) {
        return false;
    }
    let code = answer
        .body
        .pointer("/error/code")
        .or_else(|| answer.body.pointer("/error/type"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    code == "model_not_found" || answer.message.to_ascii_lowercase().contains("model")
}

/// Where a key is checked before the model list: OpenRouter lists its models to anyone, so
/// the list alone would pass a wrong key. Its `/key` describes the key presented.
pub fn key_check_path(api_base: &str) -> Option<String> {
    api_base.contains("openrouter.ai").then(|| "key".to_owned())
}
