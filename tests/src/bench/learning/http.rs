//! The few HTTP calls the learning benchmark makes to the proxy: a chat turn as an agent
//! sends it, and admin reads. One connection per call keeps it simple; the benchmark sends a
//! few hundred requests, so connection reuse does not matter.

use std::net::SocketAddr;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{Method, Request, header};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

/// Sends `req` on a fresh connection and reads the JSON answer, failing on a non-2xx status.
async fn send(addr: SocketAddr, req: Request<Full<Bytes>>) -> Result<Value> {
    let tcp = TcpStream::connect(addr)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(async move {
        // Ends when the connection closes; errors surface on the request.
        let _ = conn.await;
    });
    let resp = sender.send_request(req).await?;
    let status = resp.status();
    let body = resp.into_body().collect().await?.to_bytes();
    if !status.is_success() {
        bail!("HTTP {status}: {}", String::from_utf8_lossy(&body));
    }
    serde_json::from_slice(&body).context("the answer is not JSON")
}

/// One OpenAI chat request in `session`; `done` ends the session (`X-Session-Done`).
/// Returns the assistant's text.
pub async fn chat(
    addr: SocketAddr,
    key: &str,
    session: &str,
    messages: Value,
    done: bool,
) -> Result<String> {
    let body = serde_json::json!({"model": "agent", "messages": messages});
    let mut req = Request::builder()
        .method(Method::POST)
        .uri("/v1/chat/completions")
        .header(header::HOST, addr.to_string())
        .header(header::AUTHORIZATION, format!("Bearer {key}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header("x-session-id", session);
    if done {
        req = req.header("x-session-done", "true");
    }
    let answer = send(addr, req.body(Full::new(Bytes::from(body.to_string())))?).await?;
    answer["choices"][0]["message"]["content"]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("no assistant text in {answer}"))
}

/// `POST path` on the admin API with a JSON body.
pub async fn admin_post(addr: SocketAddr, token: &str, path: &str, body: &Value) -> Result<Value> {
    let req = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(header::HOST, addr.to_string())
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))?;
    send(addr, req).await
}

/// `GET path` on the admin API.
pub async fn admin(addr: SocketAddr, token: &str, path: &str) -> Result<Value> {
    let req = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::HOST, addr.to_string())
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Full::new(Bytes::new()))?;
    send(addr, req).await
}
