//! Talks to the running engine's admin API on loopback, with the token from `run/`.

use std::time::Duration;

use metaclaw_engine::paths::Paths;
use metaclaw_engine::runfiles::RunInfo;
use serde_json::Value;

use crate::exit::{Failure, NOT_RUNNING};

/// The running engine's client, `None` when MetaClaw is not running.
pub fn running(paths: &Paths) -> Result<Option<AdminClient>, Failure> {
    match AdminClient::connect(paths) {
        Ok(c) => Ok(Some(c)),
        Err(f) if f.code == NOT_RUNNING => Ok(None),
        Err(f) => Err(f),
    }
}

/// A runtime for one command's calls to the engine.
pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

pub struct AdminClient {
    base: String,
    token: String,
    http: reqwest::Client,
    pub pid: u32,
}

impl AdminClient {
    /// The client for the running engine, or "not running" (exit 3).
    pub fn connect(paths: &Paths) -> Result<AdminClient, Failure> {
        let Some(info) = RunInfo::read(paths)? else {
            return Err(Failure::not_running());
        };
        if !info.is_alive() {
            return Err(Failure::not_running());
        }
        let (Some(port), Some(token)) = (info.port, info.admin_token) else {
            return Err(Failure::error(
                "MetaClaw is starting (its run files are incomplete); try again in a moment",
            ));
        };
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .no_proxy()
            .build()?;
        Ok(AdminClient {
            base: format!("http://127.0.0.1:{port}"),
            token: token.expose().to_string(),
            http,
            pid: info.pid,
        })
    }

    /// The client for an engine this process runs (the desktop app knows its address and
    /// token without reading the run files).
    #[cfg(feature = "desktop")]
    pub fn local(addr: std::net::SocketAddr, token: &str) -> Result<AdminClient, Failure> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .no_proxy()
            .build()?;
        Ok(AdminClient {
            base: format!("http://{addr}"),
            token: token.to_owned(),
            http,
            pid: std::process::id(),
        })
    }

    pub async fn get(&self, path: &str) -> Result<Value, Failure> {
        self.call(reqwest::Method::GET, path).await
    }

    pub async fn post(&self, path: &str) -> Result<Value, Failure> {
        self.call(reqwest::Method::POST, path).await
    }

    /// POST with a JSON body.
    pub async fn post_json(&self, path: &str, body: &Value) -> Result<Value, Failure> {
        self.send(
            self.http
                .post(format!("{}{path}", self.base))
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string()),
        )
        .await
    }

    /// POST with a JSON body, giving up after `timeout` (an agent's hook, which must not
    /// hold the agent up).
    pub async fn post_json_within(
        &self,
        path: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<Value, Failure> {
        self.send(
            self.http
                .post(format!("{}{path}", self.base))
                .timeout(timeout)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string()),
        )
        .await
    }

    /// PATCH with a JSON body.
    pub async fn patch_json(&self, path: &str, body: &Value) -> Result<Value, Failure> {
        self.send(
            self.http
                .patch(format!("{}{path}", self.base))
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string()),
        )
        .await
    }

    pub async fn delete(&self, path: &str) -> Result<Value, Failure> {
        self.call(reqwest::Method::DELETE, path).await
    }

    /// POST whose answer the caller reads whatever its status (an endpoint whose error
    /// answers carry their own fields), waiting up to `timeout` (long work such as a
    /// training step); only no answer at all is a failure.
    pub async fn post_answer(
        &self,
        path: &str,
        timeout: Duration,
    ) -> Result<(u16, Value), Failure> {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .timeout(timeout)
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| {
                Failure::error(format!("MetaClaw (PID {}) did not answer: {e}", self.pid))
            })?;
        let status = resp.status();
        let body = resp.bytes().await?;
        let value = serde_json::from_slice(&body).map_err(|e| {
            Failure::error(format!("unexpected answer from MetaClaw ({status}): {e}"))
        })?;
        Ok((status.as_u16(), value))
    }

    async fn call(&self, method: reqwest::Method, path: &str) -> Result<Value, Failure> {
        self.send(self.http.request(method, format!("{}{path}", self.base)))
            .await
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Value, Failure> {
        let resp = request.bearer_auth(&self.token).send().await.map_err(|e| {
            Failure::error(format!("MetaClaw (PID {}) did not answer: {e}", self.pid))
        })?;
        read(resp).await
    }
}

async fn read(resp: reqwest::Response) -> Result<Value, Failure> {
    let status = resp.status();
    let body = resp.bytes().await?;
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| Failure::error(format!("unexpected answer from MetaClaw ({status}): {e}")))?;
    if !status.is_success() {
        let msg = value
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("unknown error");
        return Err(Failure::error(format!("MetaClaw answered {status}: {msg}")));
    }
    Ok(value)
}
