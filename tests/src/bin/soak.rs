#![allow(clippy::print_stdout, clippy::print_stderr)]
//! Soak: does MetaClaw's memory stay bounded over hundreds of thousands of turns?
//!
//! Starts `fake-upstream --fast` and the release `metaclaw` (memory and skills on) on
//! 127.0.0.1, then sends `--turns` turns in one session and `--turns` more spread over
//! `--sessions` sessions, each request shaped like a real client's (system prompt, the last
//! `--history` exchanges, one new user message, so every turn gets a fresh block and the
//! resent messages get theirs back). Prints the proxy's RSS at the start, every
//! `--report-every` turns and after `--idle` seconds without requests, and whether growth
//! and idle memory met their targets. Stops by itself (`--time-limit`).
//!
//! `cargo build --release -p metaclaw -p metaclaw-e2e && target/release/soak [--turns N]`

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use metaclaw_e2e::bench::client::{self, Conn};
use metaclaw_e2e::bench::conversation::request_body;
use metaclaw_e2e::bench::entry;
use metaclaw_e2e::bench::procs::{self, Proxy, ProxySpec};
use metaclaw_e2e::bench::rss::PeakRss;
use metaclaw_e2e::bench::soak::{Progress, Verdict, table};

const UPSTREAM_KEY: &str = "sk-soak-upstream";
const PROXY_KEY: &str = "mc-soak-proxy";
/// A run stops early once this many requests failed: something is broken, not leaking.
const MAX_ERRORS: u64 = 100;
/// What one request may cost in memory, as a multiple of its body.
const HUGE_BODY_RATIO: f64 = 4.0;

#[derive(Parser, Debug)]
#[command(about = "Soak the MetaClaw proxy: RSS over many turns against the fast fake upstream")]
struct Args {
    /// The proxy binary; defaults to `metaclaw` next to this binary.
    #[arg(long)]
    metaclaw: Option<PathBuf>,
    /// The fake upstream binary; defaults to `fake-upstream` next to this binary.
    #[arg(long)]
    fake: Option<PathBuf>,
    /// Turns in each phase: one session, then spread over `--sessions`.
    #[arg(long, default_value_t = 200_000)]
    turns: u64,
    /// Sessions of the second phase.
    #[arg(long, default_value_t = 20_000)]
    sessions: u64,
    /// Earlier exchanges (user + assistant) each request resends.
    #[arg(long, default_value_t = 4)]
    history: u64,
    /// Connections of the second phase, each running its share of the sessions.
    #[arg(long, default_value_t = 4)]
    concurrency: u64,
    /// A checkpoint every this many turns.
    #[arg(long, default_value_t = 50_000)]
    report_every: u64,
    /// Seconds without requests before the last reading.
    #[arg(long, default_value_t = 60)]
    idle: u64,
    /// The run stops once MetaClaw's RSS passes this many MB.
    #[arg(long, default_value_t = 2000)]
    max_rss_mb: u64,
    /// Hard limit for the whole run, in seconds.
    #[arg(long, default_value_t = 3600)]
    time_limit: u64,
    /// Only the one-session phase.
    #[arg(long)]
    one_session_only: bool,
    /// Memory off, to see what it costs (on by default, as users have it).
    #[arg(long)]
    no_memory: bool,
    /// Skills off, to see what they cost (on by default, as users have them).
    #[arg(long)]
    no_skills: bool,
    /// Skill evolution off (`skills.auto_evolve: false`), to see what it costs.
    #[arg(long)]
    no_evolution: bool,
    /// Memory extraction off (`memory.auto_extract: false`), to see what it costs.
    #[arg(long)]
    no_extraction: bool,
    /// YAML appended to the proxy's config, other than `skills` and `memory` (e.g.
    /// `session:\n  idle_timeout_minutes: 1\n`).
    #[arg(long, default_value = "")]
    extra_config: String,
    /// Extra environment of the proxy, `KEY=VALUE` (repeatable): e.g. allocator settings.
    #[arg(long = "proxy-env", value_parser = key_value)]
    proxy_env: Vec<(String, String)>,
    /// Instead of the soak, send three requests whose newest user message is this many MB
    /// of text, one after another, and report MetaClaw's peak memory for each against the
    /// body's size.
    #[arg(long, default_value_t = 0)]
    huge_mb: u64,
    /// Copy the database (and its write log) into this folder at the end, to look inside.
    #[arg(long, value_name = "DIR")]
    keep_database: Option<PathBuf>,
    /// Also print the checkpoints and verdict as JSON.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let limit = Duration::from_secs(args.time_limit);
    entry::run_to_exit("soak", 2, Some(limit), run(&args))
}

fn key_value(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))
}

async fn run(args: &Args) -> Result<bool> {
    if args.turns == 0 || args.sessions == 0 || args.concurrency == 0 {
        bail!("--turns, --sessions and --concurrency must be positive");
    }
    let fake_exe = args
        .fake
        .clone()
        .map_or_else(|| entry::sibling("fake-upstream"), Ok)?;
    let (_fake, fake_addr) = procs::start_fake(&fake_exe, UPSTREAM_KEY).await?;
    let proxy_exe = args
        .metaclaw
        .clone()
        .map_or_else(|| entry::sibling("metaclaw"), Ok)?;
    // Written out so the run does not depend on the defaults.
    let extra = format!(
        "skills:\n  enabled: {}\n  auto_evolve: {}\nmemory:\n  enabled: {}\n  auto_extract: {}\n{}",
        !args.no_skills,
        !args.no_evolution,
        !args.no_memory,
        !args.no_extraction,
        args.extra_config.replace("\\n", "\n")
    );
    let spec = ProxySpec {
        exe: &proxy_exe,
        upstream: fake_addr,
        upstream_key: UPSTREAM_KEY,
        proxy_key: PROXY_KEY,
        extra_config: &extra,
        env: &args.proxy_env,
    };
    let proxy = procs::start_proxy(&spec, Duration::from_secs(30))
        .await
        .context("the proxy did not start")?;
    let pid = proxy.guard.pid().context("the proxy has no pid")?;
    let progress = Arc::new(Progress::new(
        pid,
        proxy.addr,
        args.report_every,
        args.max_rss_mb,
    ));
    if args.huge_mb > 0 {
        return huge_bodies(&proxy, pid, args.huge_mb).await;
    }
    let start = progress.checkpoint("start").await;
    let peak = PeakRss::start(pid, Duration::from_millis(250));

    let sessions = args.sessions.min(args.turns);
    let per_session = args.turns / sessions;
    println!(
        "soak: {} turns in one session, then {} turns over {sessions} sessions ({per_session} each), {} earlier exchanges resent per request",
        args.turns,
        sessions * per_session,
        args.history
    );
    one_session(&proxy, args, &progress).await?;
    progress.checkpoint("one session done").await;
    if !args.one_session_only {
        many_sessions(&proxy, args, sessions, per_session, &progress).await?;
        progress.checkpoint("many sessions done").await;
    }
    let peak_kib = peak.finish().await;

    tokio::time::sleep(Duration::from_secs(args.idle)).await;
    let idle = progress
        .checkpoint(&format!("after {} s idle", args.idle))
        .await;
    let file_mb = |name: &str| {
        std::fs::metadata(proxy.home().join(name)).map_or(0.0, |m| m.len() as f64 / 1e6)
    };
    let db_mb = file_mb("metaclaw.db") + file_mb("metaclaw.db-wal");
    let sent_mb = progress.sent_bytes() as f64 / 1e6;

    let verdict = Verdict::new(start.rss_kib, peak_kib.max(start.rss_kib), idle.rss_kib);
    let rows = progress.checkpoints();
    let title = format!(
        "MetaClaw soak: {} turns in {:.0} s, {} errors, database {db_mb:.0} MB",
        progress.turns(),
        progress.elapsed().as_secs_f64(),
        progress.errors()
    );
    println!("{}", table(&title, &rows, &verdict));
    // A layout that stores each request whole keeps at least what was sent.
    println!(
        "database {db_mb:.1} MB (with its write log) for {} turns: {:.0} B per turn; the request bodies sent were {sent_mb:.1} MB ({:.1}x the database)",
        progress.turns(),
        db_mb * 1e6 / progress.turns().max(1) as f64,
        sent_mb / db_mb.max(1e-9)
    );
    if let Some(e) = progress.first_error() {
        println!("first error: {e}");
    }
    // What takes the space, as `metaclaw storage` says it.
    let token = std::fs::read_to_string(proxy.home().join("run/admin_token"))?;
    match metaclaw_e2e::bench::learning::http::admin(proxy.addr, token.trim(), "/api/storage").await
    {
        Ok(report) => {
            let parts: Vec<String> = report["space"]["parts"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| {
                            format!(
                                "{} {:.1} MB",
                                p["what"].as_str().unwrap_or("?"),
                                p["bytes"].as_f64().unwrap_or(0.0) / 1e6
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            println!(
                "used pages: {}; free {:.1} MB, write log {:.1} MB",
                parts.join(", "),
                report["space"]["free_bytes"].as_f64().unwrap_or(0.0) / 1e6,
                report["space"]["wal_bytes"].as_f64().unwrap_or(0.0) / 1e6
            );
        }
        Err(e) => println!("the storage report could not be read: {e}"),
    }
    if let Some(dir) = &args.keep_database {
        for name in ["metaclaw.db", "metaclaw.db-wal"] {
            let from = proxy.home().join(name);
            if from.exists() {
                std::fs::copy(&from, dir.join(name))?;
            }
        }
        println!("database copied to {}", dir.display());
    }
    if args.json {
        let json = serde_json::json!({"checkpoints": rows, "verdict": verdict});
        println!("{}", serde_json::to_string_pretty(&json)?);
    }
    Ok(verdict.ok() && progress.errors() == 0)
}

/// What one huge request costs: the kernel's high-water mark during it over MetaClaw's RSS
/// before the first, for three requests in one session (the recording of one may overlap the
/// next). Passes when each costs at most [`HUGE_BODY_RATIO`] times
/// the body.
async fn huge_bodies(proxy: &Proxy, pid: u32, mb: u64) -> Result<bool> {
    let text_len = usize::try_from(mb * 1_000_000)?;
    let mut ok = true;
    let mut conn = Conn::open(proxy.addr).await?;
    let before = procs::rss_kib(pid).context("no RSS")?;
    println!("huge bodies: {mb} MB of text in the newest user message");
    for n in 1..=3 {
        // Each request a little different, so nothing is served from an earlier turn.
        let text = format!(
            "{n} {}",
            "lorem ipsum dolor sit amet ".repeat(text_len / 27)
        );
        let body = serde_json::json!({
            "model": "soak-model",
            "messages": [{"role": "system", "content": "You are terse."},
                         {"role": "user", "content": text}],
        })
        .to_string();
        let body_mb = body.len() as f64 / 1e6;
        drop(text);
        let req = client::chat(proxy.addr, PROXY_KEY, "soak-huge", body)?;
        procs::reset_peak_rss(pid)?;
        // Anything but a complete 200 reply is an error here.
        conn.send(req, false).await?;
        let peak = procs::peak_rss_kib(pid).context("no peak RSS")?;
        let cost_mb = peak.saturating_sub(before) as f64 / 1024.0;
        let ratio = cost_mb / body_mb;
        ok &= ratio <= HUGE_BODY_RATIO;
        println!(
            "request {n}: 200, body {body_mb:.1} MB, RSS at start {:.1} MB, peak {:.1} MB: +{cost_mb:.1} MB ({ratio:.1}x the body; target <= {HUGE_BODY_RATIO}x)",
            before as f64 / 1024.0,
            peak as f64 / 1024.0,
        );
    }
    // Everything a request held must go once MetaClaw is quiet: it gives freed memory back
    // after ten to twenty seconds without requests.
    let after = procs::rss_kib(pid).context("no RSS")?;
    tokio::time::sleep(Duration::from_secs(30)).await;
    let idle = procs::rss_kib(pid).context("no RSS")?;
    let idle_ratio = idle as f64 / before as f64;
    println!(
        "after 30 s idle: {:.1} MB, {:.0}% of the start (was {:.1} MB right after the last request; target <= 120%)",
        idle as f64 / 1024.0,
        idle_ratio * 100.0,
        after as f64 / 1024.0
    );
    Ok(ok && idle_ratio <= 1.2)
}

/// One conversation, one turn after another, as one agent session would send them.
async fn one_session(proxy: &Proxy, args: &Args, progress: &Progress) -> Result<()> {
    let mut conn = Conn::open(proxy.addr).await?;
    for turn in 0..args.turns {
        let body = request_body(0, turn, args.history);
        progress.sent(body.len());
        let req = client::chat(proxy.addr, PROXY_KEY, "soak-long", body)?;
        send(&mut conn, proxy, req, progress).await?;
        progress.turn_done("one session").await?;
    }
    Ok(())
}

/// `sessions` conversations of `per_session` turns, `--concurrency` at a time: each
/// connection runs its share of the conversations one after another, as agents do; the
/// finished ones stay open in MetaClaw until their idle timeout.
async fn many_sessions(
    proxy: &Proxy,
    args: &Args,
    sessions: u64,
    per_session: u64,
    progress: &Arc<Progress>,
) -> Result<()> {
    let mut tasks = Vec::new();
    let step = usize::try_from(args.concurrency)?;
    for w in 0..args.concurrency {
        let (addr, history, progress) = (proxy.addr, args.history, progress.clone());
        let mut conn = Conn::open(addr).await?;
        tasks.push(tokio::spawn(async move {
            for s in (w..sessions).step_by(step) {
                let conversation = s + 1;
                for turn in 0..per_session {
                    let body = request_body(conversation, turn, history);
                    progress.sent(body.len());
                    let req = client::chat(addr, PROXY_KEY, &format!("soak-{s}"), body)?;
                    send_to(&mut conn, addr, req, &progress).await?;
                    progress.turn_done("many sessions").await?;
                }
            }
            Ok::<_, anyhow::Error>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(())
}

async fn send(
    conn: &mut Conn,
    proxy: &Proxy,
    req: http::Request<http_body_util::Full<bytes::Bytes>>,
    progress: &Progress,
) -> Result<()> {
    send_to(conn, proxy.addr, req, progress).await
}

/// Sends one turn; a failure is counted and the connection reopened, and too many stop
/// the run.
async fn send_to(
    conn: &mut Conn,
    addr: std::net::SocketAddr,
    req: http::Request<http_body_util::Full<bytes::Bytes>>,
    progress: &Progress,
) -> Result<()> {
    if let Err(e) = conn.send(req, false).await {
        progress.failed(format!("{e:#}"));
        if progress.errors() >= MAX_ERRORS {
            bail!(
                "{MAX_ERRORS} requests failed; first: {}",
                progress.first_error().unwrap_or_default()
            );
        }
        *conn = Conn::open(addr).await?;
    }
    Ok(())
}
