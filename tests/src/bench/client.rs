//! The load generator's HTTP/1.1 client: one keep-alive connection per task, built directly on
//! hyper so the generator spends as little CPU as possible on the cores it shares with the
//! proxy and the fake.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
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
#[derive(Debug, Clone)]
pub struct Sample {
    /// Until the whole response body was read.
    pub latency: Duration,
    /// Until the first body bytes containing `data:` (streaming only).
    pub ttft: Option<Duration>,
    /// Between one body frame and the next after the first `data:` (streaming only): a
    /// proxy that held chunks back would show here.
    pub gaps: Vec<Duration>,
    pub overhead_ms: Option<f64>,
}

/// What the requests ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// One fixed question: after the first request every turn reuses the remembered block.
    Hello,
    /// The first turn of a new conversation every time (its own session id), asking
    /// questions that match built-in skills: retrieval, rendering, injection and the
    /// remembered block's write on every request — the most skills can cost.
    NewConversations,
    /// As `NewConversations`, each question naming one of a few dozen services, so the
    /// memory search of a large library sees varied terms, and a ticket number of its own,
    /// so no two questions are the same text and none finds its vector already computed
    /// (`bench --library`).
    LibraryQuestions,
    /// As `LibraryQuestions`, but drawn from the same 64 texts, each asked again in a new
    /// conversation: everything retrieval does except embedding the question, whose vector
    /// the engine keeps for a repeated text.
    LibraryRepeats,
}

/// Distinct texts of `Workload::LibraryRepeats`; within what the engine keeps of recent
/// questions' vectors (512).
const REPEATED_TEXTS: u64 = 64;

/// The first library question's ticket number: above every number in the seeded units.
const TICKETS_FROM: u64 = 1_000;

/// Questions an agent's user might ask, most of them matching a built-in skill.
pub const QUESTIONS: &[&str] = &[
    "My pytest suite fails with an ImportError after I renamed a module. How do I debug it?",
    "Write a bash script that renames every .jpeg file in a folder to .jpg safely.",
    "Review this pull request for security problems: it builds SQL from user input.",
    "Summarise the latest research on retrieval augmented generation with sources.",
    "Our CI is flaky: the same integration test passes locally and fails on CI.",
    "Draft a polite email to a client explaining the release slipped by a week.",
    "How should I design the REST API for invoices with pagination and versioning?",
    "Plan a database migration that renames a column without downtime.",
    "Analyse this CSV of sales by region and tell me which quarter grew fastest.",
    "Help me set up two-factor authentication and a password manager for my accounts.",
    "The service leaks memory after a day in production; where do I start?",
    "Schedule a weekly backup of my notes folder to an external drive.",
    "Explain this Rust borrow checker error: cannot borrow as mutable more than once.",
    "What is a good commit message for a change that fixes a race in the cache?",
    "Refactor this 400-line function into smaller pieces without changing behaviour.",
    "Say hello in one short sentence.",
];

/// Numbers new conversations across all connections and rounds.
static CONVERSATIONS: AtomicU64 = AtomicU64::new(0);

/// A request aimed at one server.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    pub bearer: String,
    pub stream: bool,
    pub workload: Workload,
}

impl Target {
    fn body(&self, question: &str) -> String {
        let question = serde_json::Value::from(question);
        if self.stream {
            format!(
                r#"{{"model":"fake-model","messages":[{{"role":"user","content":{question}}}],"stream":true,"stream_options":{{"include_usage":true}}}}"#
            )
        } else {
            format!(
                r#"{{"model":"fake-model","messages":[{{"role":"user","content":{question}}}],"stream":false}}"#
            )
        }
    }

    fn request(&self) -> Result<Request<Full<Bytes>>> {
        let builder = Request::builder()
            .method(Method::POST)
            .uri("/v1/chat/completions")
            .header(header::HOST, self.addr.to_string())
            .header(header::AUTHORIZATION, format!("Bearer {}", self.bearer))
            .header(header::CONTENT_TYPE, "application/json");
        let (builder, question) = match self.workload {
            Workload::Hello => (builder, "Say hello in one short sentence.".to_owned()),
            Workload::NewConversations | Workload::LibraryQuestions | Workload::LibraryRepeats => {
                let n = CONVERSATIONS.fetch_add(1, Ordering::Relaxed);
                let text = match self.workload {
                    Workload::LibraryRepeats => n % REPEATED_TEXTS,
                    _ => n,
                };
                let mut question = QUESTIONS[(text % QUESTIONS.len() as u64) as usize].to_owned();
                if self.workload != Workload::NewConversations {
                    let services = super::library::SERVICES;
                    let service = services[(text / 7 % services.len() as u64) as usize];
                    // From 1,000 up: the library's units name sprints 0-96, and a question
                    // sharing such a number with hundreds of units costs the word search more,
                    // which made repeated texts (tickets 0-63) dearer than new ones by words.
                    let ticket = TICKETS_FROM + text;
                    question.push_str(&format!(
                        " It is for the {service} service, ticket {ticket}."
                    ));
                }
                (
                    builder.header("x-session-id", format!("bench-{n}")),
                    question,
                )
            }
        };
        Ok(builder.body(Full::new(Bytes::from(self.body(&question))))?)
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
        let req = target.request()?;
        self.send(req, target.stream).await
    }

    /// Sends a prepared request; `stream` says whether the reply must be a finished SSE
    /// stream.
    pub async fn send(&mut self, req: Request<Full<Bytes>>, stream: bool) -> Result<Sample> {
        self.sender.ready().await?;
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
        let mut gaps = Vec::new();
        let mut last_frame: Option<Instant> = None;
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame?.into_data() else {
                continue;
            };
            total += data.len();
            if let Some(last) = last_frame {
                let now = Instant::now();
                gaps.push(now - last);
                last_frame = Some(now);
            }
            if stream && ttft.is_none() {
                head.extend_from_slice(&data[..data.len().min(64)]);
                if contains(&head, b"data:") {
                    ttft = Some(start.elapsed());
                    last_frame = Some(Instant::now());
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
        if stream && !contains(&tail, b"data: [DONE]") {
            bail!("stream ended without data: [DONE] ({total} bytes)");
        }
        if total == 0 {
            bail!("empty response body");
        }
        Ok(Sample {
            latency,
            ttft,
            gaps,
            overhead_ms,
        })
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A non-streaming OpenAI chat request for `session`, with `body` as its JSON.
pub fn chat(
    addr: SocketAddr,
    bearer: &str,
    session: &str,
    body: String,
) -> Result<Request<Full<Bytes>>> {
    Ok(Request::builder()
        .method(Method::POST)
        .uri("/v1/chat/completions")
        .header(header::HOST, addr.to_string())
        .header(header::AUTHORIZATION, format!("Bearer {bearer}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header("x-session-id", session)
        .body(Full::new(Bytes::from(body)))?)
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
