//! The HTTP call the judge and the distillation teacher share: one JSON POST to an
//! OpenAI-compatible service, the key as a bearer token, the reply read as JSON. Connection
//! failures, 5xx, 429 and unreadable replies are transient (the caller retries later);
//! other statuses are not. Errors never carry the URL or the key.

use std::time::Duration;

use serde_json::Value;

use crate::error::LearnError;

#[derive(Debug, Clone)]
pub(crate) struct GraderHttp {
    /// Named in errors: `the judge`, `the distillation teacher`.
    service: &'static str,
    http: reqwest::Client,
}

impl GraderHttp {
    pub fn new(service: &'static str, timeout: Duration) -> Result<Self, LearnError> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| error(service, format!("cannot build the HTTP client: {e}"), false))?;
        Ok(Self { service, http })
    }

    /// POSTs `body` to `base_url` + `path` (`/chat/completions`, `/completions`).
    pub async fn post(
        &self,
        base_url: &str,
        path: &str,
        key: Option<&str>,
        body: &Value,
    ) -> Result<Value, LearnError> {
        let url = format!("{}{path}", base_url.trim_end_matches('/'));
        let mut req = self.http.post(url).json(body);
        if let Some(key) = key {
            req = req.bearer_auth(key);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| self.error(format!("request failed: {}", e.without_url()), true))?;
        let status = resp.status();
        if !status.is_success() {
            let transient = status.is_server_error() || status.as_u16() == 429;
            return Err(self.error(format!("HTTP {}", status.as_u16()), transient));
        }
        resp.json()
            .await
            .map_err(|e| self.error(format!("unreadable reply: {}", e.without_url()), true))
    }

    /// An error of this service.
    pub fn error(&self, detail: String, transient: bool) -> LearnError {
        error(self.service, detail, transient)
    }
}

fn error(service: &'static str, detail: String, transient: bool) -> LearnError {
    LearnError::Service {
        service,
        detail,
        transient,
    }
}
