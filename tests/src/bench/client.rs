//! The load generator's HTTP/1.1 client: one keep-alive connection per task, built directly on
//! hyper so the generator spends as little CPU as possible on the cores it shares with the
//! proxy and the fake.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{Method, Request, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Response header in which the proxy reports its own processing time.
pub const OVERHEAD_HEADER: &str = "x-metaclaw-overhead-ms";

/// What one request measured.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Until the whole response body was read.
    pub latency: Duration,
    /// Until the first body bytes containing `data:` (streaming only).
    pub ttft: Option<Duration>,
    pub overhead_ms: Option<f64>,
}

/// A fixed request aimed at one server.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    pub bearer: String,
    pub stream: bool,
}

impl Target {
    fn body(&self) -> &'static str {
        if self.stream {
            r#"{"model":"fake-model","messages":[{"role":"user","content":"Say hello in one short sentence."}],"stream":true,"stream_options":{"include_usage":true}}"#
        } else {
            r#"{"model":"fake-model","messages":[{"role":"user","content":"Say hello in one short sentence."}],"stream":false}"#
        }
    }

    fn request(&self) -> Result<Request<Full<Bytes>>> {
        Ok(Request::builder()
            .method(Method::POST)
            .uri("/v1/chat/completions")
            .header(header::HOST, self.addr.to_string())
            .header(header::AUTHORIZATION, format!("Bearer {}", self.bearer))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from_static(self.body().as_bytes())))?)
    }
}

/// One keep-alive connection.
pub struct Conn {
    sender: SendRequest<Full<Bytes>>,
}

impl Conn {
    pub async fn open(addr: SocketAddr) -> Result<Self> {
        let tcp = TcpStream::connect(addr)
            .await
            .with_context(|| format!("connecting to {addr}"))?;
        tcp.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
        tokio::spawn(async move {
            // Ends when the connection closes; errors surface on the next request.
            let _ = conn.await;
        });
        Ok(Self { sender })
    }

    /// Sends one request and reads the whole response, checking it is a complete success.
    pub async fn call(&mut self, target: &Target) -> Result<Sample> {
        self.sender.ready().await?;
        let req = target.request()?;
        let start = Instant::now();
        let resp = self.sender.send_request(req).await?;
        let status = resp.status();
        let overhead_ms = resp
            .headers()
            .get(OVERHEAD_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok());
        let mut body = resp.into_body();
        let mut ttft = None;
        // Enough of the start to spot `data:` and of the end to spot the terminator.
        let mut head: Vec<u8> = Vec::new();
        let mut tail: Vec<u8> = Vec::new();
        let mut total = 0usize;
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame?.into_data() else {
                continue;
            };
            total += data.len();
            if target.stream && ttft.is_none() {
                head.extend_from_slice(&data[..data.len().min(64)]);
                if contains(&head, b"data:") {
                    ttft = Some(start.elapsed());
                }
            }
            tail.extend_from_slice(&data[data.len().saturating_sub(32)..]);
            if tail.len() > 64 {
                tail.drain(..tail.len() - 32);
            }
        }
        let latency = start.elapsed();
        if !status.is_success() {
            bail!("HTTP {status}");
        }
        if target.stream && !contains(&tail, b"data: [DONE]") {
            bail!("stream ended without data: [DONE] ({total} bytes)");
        }
        if total == 0 {
            bail!("empty response body");
        }
        Ok(Sample {
            latency,
            ttft,
            overhead_ms,
        })
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A one-off GET returning status and body, for readiness checks.
pub async fn get(addr: SocketAddr, path: &str) -> Result<(u16, Bytes)> {
    let mut conn = Conn::open(addr).await?;
    conn.sender.ready().await?;
    let req = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::HOST, addr.to_string())
        .body(Full::new(Bytes::new()))?;
    let resp = conn.sender.send_request(req).await?;
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await?.to_bytes();
    Ok((status, body))
}
