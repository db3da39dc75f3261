#![allow(clippy::print_stdout, clippy::print_stderr)]
//! Measures what the proxy adds: latency, time to first token, throughput and memory, by
//! sending the same OpenAI chat requests straight to the fake upstream and through the proxy.
//!
//! The fake runs as a child process rather than on this process's runtime: the generator's
//! worker threads then measure instead of also serving, and the fake is scheduled by the OS
//! like the proxy, the same way a separate provider would be.
//!
//! `cargo build --release -p metaclaw -p metaclaw-e2e && target/release/bench [--skills] [--json]`

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use metaclaw_e2e::bench::client::{Conn, Target, Workload};
use metaclaw_e2e::bench::entry;
use metaclaw_e2e::bench::load::{RoundResult, run_round};
use metaclaw_e2e::bench::procs::{self, ProxySpec};
use metaclaw_e2e::bench::report::{Added, LibraryCompare, Report, Settings, SkillsCompare};
use metaclaw_e2e::bench::rss::PeakRss;
use metaclaw_e2e::bench::stats::PhaseStats;
use metaclaw_e2e::bench::{library, library_vectors};

const UPSTREAM_KEY: &str = "sk-bench-upstream";
const PROXY_KEY: &str = "mc-bench-proxy";
const LITELLM_KEY: &str = "sk-bench-litellm";

#[derive(Parser, Debug)]
#[command(about = "Benchmark the MetaClaw proxy against the fake upstream, all on 127.0.0.1")]
struct Args {
    /// The proxy binary; defaults to `metaclaw` next to this binary.
    #[arg(long)]
    metaclaw: Option<PathBuf>,
    /// The fake upstream binary; defaults to `fake-upstream` next to this binary.
    #[arg(long)]
    fake: Option<PathBuf>,
    /// Connections (one closed-loop task each).
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Measured requests per phase (split over the rounds).
    #[arg(long, default_value_t = 20_000)]
    requests: usize,
    /// Direct and proxied rounds alternate this many times per request kind, so drift hits
    /// both alike.
    #[arg(long, default_value_t = 4)]
    rounds: usize,
    /// Unmeasured requests before each round; default max(4 × concurrency, round / 10).
    #[arg(long)]
    warmup: Option<usize>,
    /// Total requests per second to send (paced, not closed loop): measures the latency
    /// MetaClaw adds on a machine that is not saturated.
    #[arg(long)]
    rate: Option<f64>,
    /// Worker threads of the load generator.
    #[arg(long, default_value_t = 2)]
    client_threads: usize,
    /// Hard limit for the whole run, in seconds.
    #[arg(long, default_value_t = 300)]
    time_limit: u64,
    /// Also print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Also compare skills off and on: a second proxy with skills disabled, and a workload
    /// where every request is the first turn of a new conversation asking a question that
    /// matches built-in skills (non-streaming).
    #[arg(long)]
    skills: bool,
    /// Only load the fake directly (no proxy): checks the generator itself.
    #[arg(long)]
    direct_only: bool,
    /// LiteLLM's proxy CLI (`litellm`, from PyPI): also measured, one worker in front of
    /// the same fake, in the same alternating rounds (`scripts/bench.sh` installs it).
    #[arg(long)]
    litellm: Option<PathBuf>,
    /// Also measure the pauses between a stream's chunks: a second fake pausing this many
    /// milliseconds between chunks, straight and through a second MetaClaw.
    #[arg(long)]
    chunk_gap_ms: Option<u64>,
    /// Also measure new questions against a large library: a MetaClaw whose home holds
    /// `--library-skills` skills and `--library-memories` memories, skills and memory on.
    #[arg(long)]
    library: bool,
    #[arg(long, default_value_t = 10_000)]
    library_skills: usize,
    #[arg(long, default_value_t = 100_000)]
    library_memories: usize,
    /// With `--library`: install this embedding model (a folder or zip in the
    /// sentence-transformers layout) into the library's home and cache its vectors first,
    /// so new questions are also retrieved by meaning (the default `hybrid` mode).
    #[arg(long)]
    library_model: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.client_threads.max(1))
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bench: cannot start runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let limit = Duration::from_secs(args.time_limit);
    // Dropping `run` (time limit, Ctrl-C) drops the child guards, which kill the children.
    let outcome = runtime.block_on(async {
        tokio::select! {
            r = tokio::time::timeout(limit, run(&args)) => {
                r.unwrap_or_else(|_| Err(anyhow::anyhow!("time limit of {limit:?} exceeded")))
            }
            _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
        }
    });
    match outcome {
        Ok(report) => {
            println!("{}", report.to_text());
            if args.json {
                match serde_json::to_string_pretty(&report) {
                    Ok(j) => println!("{j}"),
                    Err(e) => eprintln!("bench: cannot render JSON: {e}"),
                }
            }
            if report.total_errors > 0 {
                eprintln!("bench: {} request(s) failed", report.total_errors);
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: &Args) -> Result<Report> {
    if args.concurrency == 0 || args.rounds == 0 || args.requests < args.rounds {
        bail!("--concurrency and --rounds must be positive and --requests at least --rounds");
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
    let proxy = if args.direct_only {
        None
    } else {
        let spec = proxy_spec(&proxy_exe, fake_addr, "");
        Some(
            procs::start_proxy(&spec, Duration::from_secs(30))
                .await
                .context("the proxy did not start")?,
        )
    };
    let litellm = match &args.litellm {
        Some(exe) => Some(
            procs::start_litellm(
                exe,
                fake_addr,
                UPSTREAM_KEY,
                LITELLM_KEY,
                Duration::from_secs(180),
            )
            .await
            .context("LiteLLM did not start")?,
        ),
        None => None,
    };
    let proxy_pid = proxy.as_ref().and_then(|p| p.guard.pid());
    let idle_rss = proxy_pid.and_then(procs::rss_kib);

    let per_round = args.requests.div_ceil(args.rounds);
    let warmup = args
        .warmup
        .unwrap_or_else(|| (args.concurrency * 4).max(per_round / 10));
    let target = |addr, bearer: &str, stream| Target {
        addr,
        bearer: bearer.to_owned(),
        stream,
        workload: Workload::Hello,
    };

    // One request each way first, so a misconfigured proxy fails with its own answer.
    for stream in [false, true] {
        let mut targets = vec![("fake", target(fake_addr, UPSTREAM_KEY, stream))];
        if let Some(p) = &proxy {
            targets.push(("proxy", target(p.addr, PROXY_KEY, stream)));
        }
        if let Some(l) = &litellm {
            targets.push(("LiteLLM", target(l.addr, LITELLM_KEY, stream)));
        }
        for (name, t) in targets {
            let mut conn = Conn::open(t.addr).await?;
            conn.call(&t)
                .await
                .with_context(|| format!("first request to the {name} (stream: {stream})"))?;
        }
    }

    let peak = proxy_pid.map(|pid| PeakRss::start(pid, Duration::from_millis(100)));
    let mut phases = Vec::new();
    let mut added = [None, None];
    let mut peer_added = [None, None];
    for (i, stream) in [false, true].into_iter().enumerate() {
        let kind = if stream { "stream" } else { "non-stream" };
        // Direct first in the list.
        let mut targets = vec![(
            format!("{kind} direct"),
            target(fake_addr, UPSTREAM_KEY, stream),
        )];
        let proxied_at = proxy.as_ref().map(|p| {
            targets.push((format!("{kind} proxied"), target(p.addr, PROXY_KEY, stream)));
            targets.len() - 1
        });
        let peer_at = litellm.as_ref().map(|l| {
            targets.push((
                format!("{kind} LiteLLM"),
                target(l.addr, LITELLM_KEY, stream),
            ));
            targets.len() - 1
        });
        let stats = compare(&targets, args, warmup, per_round).await?;
        added[i] = proxied_at.map(|p| Added::between(&stats[0], &stats[p]));
        peer_added[i] = peer_at.map(|p| Added::between(&stats[0], &stats[p]));
        phases.extend(stats);
    }
    let skills = match (&proxy, args.skills) {
        (Some(on), true) => {
            let spec = proxy_spec(&proxy_exe, fake_addr, "skills:\n  enabled: false\n");
            let off = procs::start_proxy(&spec, Duration::from_secs(30))
                .await
                .context("the skills-off proxy did not start")?;
            let agent = |addr, bearer: &str| Target {
                addr,
                bearer: bearer.to_owned(),
                stream: false,
                workload: Workload::NewConversations,
            };
            let targets = [
                ("new-conv direct".to_owned(), agent(fake_addr, UPSTREAM_KEY)),
                ("new-conv skills off".to_owned(), agent(off.addr, PROXY_KEY)),
                ("new-conv skills on".to_owned(), agent(on.addr, PROXY_KEY)),
            ];
            let [d, off_s, on_s]: [PhaseStats; 3] = compare(&targets, args, warmup, per_round)
                .await?
                .try_into()
                .map_err(|_| anyhow::anyhow!("three phases expected"))?;
            let compared = SkillsCompare {
                off: Added::between(&d, &off_s),
                on: Added::between(&d, &on_s),
                overhead_off_ms: off_s.overhead_ms_mean,
                overhead_on_ms: on_s.overhead_ms_mean,
            };
            phases.extend([d, off_s, on_s]);
            Some(compared)
        }
        _ => None,
    };
    let library = match (&proxy, args.library) {
        (Some(_), true) => {
            let (stats, compared) = library_phase(args, &proxy_exe, fake_addr, warmup, per_round)
                .await
                .context("the library phase")?;
            phases.extend(stats);
            Some(compared)
        }
        _ => None,
    };
    let gaps = match (&proxy, args.chunk_gap_ms) {
        (Some(_), Some(ms)) => {
            let (stats, added) = gap_phase(args, &proxy_exe, &fake_exe, ms, warmup)
                .await
                .context("the chunk-gap phase")?;
            phases.extend(stats);
            Some(added)
        }
        _ => None,
    };
    let peak_rss = match peak {
        Some(p) => Some(p.finish().await),
        None => None,
    };
    let [added_non_stream, added_stream] = added;
    let [litellm_non_stream, litellm_stream] = peer_added;
    Ok(Report {
        settings: Settings {
            concurrency: args.concurrency,
            requests_per_phase: per_round * args.rounds,
            rounds: args.rounds,
            client_threads: args.client_threads,
        },
        total_errors: phases.iter().map(|p| p.errors).sum(),
        phases,
        added_non_stream,
        added_stream,
        litellm_non_stream,
        litellm_stream,
        skills,
        library,
        gaps,
        proxy_rss_idle_kib: idle_rss,
        proxy_rss_peak_kib: peak_rss,
    })
}

/// Every target measured in each round, in an order that rotates so none always follows
/// another's warm caches; one summary per target, in the targets' order.
async fn compare(
    targets: &[(String, Target)],
    args: &Args,
    warmup: usize,
    per_round: usize,
) -> Result<Vec<PhaseStats>> {
    let mut results: Vec<RoundResult> = targets.iter().map(|_| RoundResult::default()).collect();
    for round in 0..args.rounds {
        let mut order: Vec<usize> = (0..targets.len()).collect();
        order.rotate_left(round % targets.len());
        for t in order {
            let acc = &mut results[t];
            let warm = run_round(&targets[t].1, args.concurrency, warmup, args.rate).await?;
            acc.errors += warm.errors;
            acc.first_error = acc.first_error.take().or(warm.first_error);
            acc.absorb(run_round(&targets[t].1, args.concurrency, per_round, args.rate).await?);
        }
    }
    Ok(targets
        .iter()
        .zip(results)
        .map(|((name, _), r)| PhaseStats::new(name, r))
        .collect())
}

/// New questions, each in its own conversation, straight to the fake and through a MetaClaw
/// whose home was seeded with a large library first.
async fn library_phase(
    args: &Args,
    proxy_exe: &std::path::Path,
    fake_addr: std::net::SocketAddr,
    warmup: usize,
    per_round: usize,
) -> Result<(Vec<PhaseStats>, LibraryCompare)> {
    let size = library::Size {
        skills: args.library_skills,
        memories: args.library_memories,
    };
    let home = tempfile::tempdir()?;
    let seed_at = home.path().to_owned();
    let started = std::time::Instant::now();
    tokio::task::spawn_blocking(move || library::seed(&seed_at, size)).await??;
    let seed_s = started.elapsed().as_secs_f64();
    if let Some(model) = &args.library_model {
        let (at, model) = (home.path().to_owned(), model.clone());
        let started = std::time::Instant::now();
        let filled =
            tokio::task::spawn_blocking(move || library_vectors::prefill(&at, &model)).await??;
        eprintln!(
            "bench: {} vectors of {} cached in {:.0} s",
            filled.vectors,
            filled.model_id,
            started.elapsed().as_secs_f64()
        );
    }
    let spec = proxy_spec(proxy_exe, fake_addr, "");
    let proxy = procs::start_proxy_in(home, &spec, "openai", Duration::from_secs(300))
        .await
        .context("the library proxy did not start")?;
    if args.library_model.is_some() {
        library_vectors::wait_for_indexes(&proxy, size.skills, Duration::from_secs(300))
            .await
            .context("the library proxy's indexes by meaning")?;
    }
    let question = |addr, bearer: &str, workload| Target {
        addr,
        bearer: bearer.to_owned(),
        stream: false,
        workload,
    };
    let targets = [
        (
            "library direct".to_owned(),
            question(fake_addr, UPSTREAM_KEY, Workload::LibraryQuestions),
        ),
        (
            "library proxied".to_owned(),
            question(proxy.addr, PROXY_KEY, Workload::LibraryQuestions),
        ),
        (
            "library asked again".to_owned(),
            question(proxy.addr, PROXY_KEY, Workload::LibraryRepeats),
        ),
    ];
    // The repeated texts' vectors are computed in the first warm-up; at least one per text.
    let stats = compare(&targets, args, warmup.max(64), per_round).await?;
    let compared = LibraryCompare {
        skills: size.skills,
        memories: size.memories,
        seed_seconds: seed_s,
        added: Added::between(&stats[0], &stats[1]),
        overhead_ms: stats[1].overhead_ms_mean,
        added_asked_again: Added::between(&stats[0], &stats[2]),
        overhead_asked_again_ms: stats[2].overhead_ms_mean,
    };
    Ok((stats, compared))
}

/// Streams whose chunks come `gap_ms` apart, straight from a second fake and through a
/// MetaClaw in front of it: what the proxy adds to the pauses between chunks.
async fn gap_phase(
    args: &Args,
    proxy_exe: &std::path::Path,
    fake_exe: &std::path::Path,
    gap_ms: u64,
    warmup: usize,
) -> Result<(Vec<PhaseStats>, Added)> {
    let gap = gap_ms.to_string();
    let (_fake, fake_addr) =
        procs::start_fake_with(fake_exe, UPSTREAM_KEY, &["--chunk-gap-ms", &gap]).await?;
    let spec = proxy_spec(proxy_exe, fake_addr, "");
    let proxy = procs::start_proxy(&spec, Duration::from_secs(30))
        .await
        .context("the chunk-gap proxy did not start")?;
    let stream = |addr, bearer: &str| Target {
        addr,
        bearer: bearer.to_owned(),
        stream: true,
        workload: Workload::Hello,
    };
    let targets = [
        (
            format!("gap {gap_ms}ms direct"),
            stream(fake_addr, UPSTREAM_KEY),
        ),
        (
            format!("gap {gap_ms}ms proxied"),
            stream(proxy.addr, PROXY_KEY),
        ),
    ];
    // Each stream takes a few gaps: a tenth of the requests measures the pauses well.
    let per_round = (args.requests / 10).div_ceil(args.rounds).max(1);
    let stats = compare(&targets, args, warmup.min(per_round), per_round).await?;
    let added = Added::between(&stats[0], &stats[1]);
    Ok((stats, added))
}

/// A MetaClaw in front of the fake at `upstream`, with `extra_config` appended.
fn proxy_spec<'a>(
    exe: &'a std::path::Path,
    upstream: std::net::SocketAddr,
    extra_config: &'a str,
) -> ProxySpec<'a> {
    ProxySpec {
        exe,
        upstream,
        upstream_key: UPSTREAM_KEY,
        proxy_key: PROXY_KEY,
        extra_config,
        env: &[],
    }
}
