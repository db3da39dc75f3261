#![allow(clippy::print_stdout, clippy::print_stderr)]
//! Learning effect: does a rule the user states once come back when it is needed, and only
//! then?
//!
//! For each setup (memory only, skills only, both, learning off) starts the release
//! `metaclaw` with a fresh home against an in-process scripted model (the fake upstream,
//! speaking the OpenAI wire protocol). Every rule of the scenario is met once, in its own
//! conversation; after learning settles, every later task and every unrelated task is asked
//! in a new conversation. The model complies with a rule only when the rule is in its prompt,
//! and learns (skills, memories) only from what the learning prompt shows it. Prints
//! compliance per setup, per kind of rule, and how often a rule reached an unrelated task's
//! prompt; exits 1 when a target is missed.
//!
//! `cargo build --release -p metaclaw -p metaclaw-e2e && target/release/learning-bench`

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use metaclaw_e2e::bench::entry;
use metaclaw_e2e::bench::learning::config::Setup;
use metaclaw_e2e::bench::learning::run::{self, Outcome, Target};
use metaclaw_e2e::bench::learning::{report, scenario, scenario_zh};
use metaclaw_e2e::bench::procs::{self, ProxySpec};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};

const UPSTREAM_KEY: &str = "sk-learning-upstream";
const PROXY_KEY: &str = "mc-learning-proxy";

#[derive(Parser, Debug)]
#[command(about = "Learning effect of MetaClaw: rules stated once, applied later, not leaked")]
struct Args {
    /// The proxy binary; defaults to `metaclaw` next to this binary.
    #[arg(long)]
    metaclaw: Option<PathBuf>,
    /// Seconds to wait for learning to settle after the rules were stated.
    #[arg(long, default_value_t = 120)]
    wait: u64,
    /// Only these setups (`memory`, `skills`, `both`, `off`); all by default.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Also print each rule's compliance and each leak.
    #[arg(long)]
    verbose: bool,
    /// Also print each setup's figures as JSON.
    #[arg(long)]
    json: bool,
    /// How the scripted model writes what it learns: `helpful` names the kind of request a
    /// correction was for; `terse` only restates the rule (a cheap extraction model).
    #[arg(long, default_value = "terse", value_parser = ["helpful", "terse"])]
    learner: String,
    /// The user's language: `en` or `zh`.
    #[arg(long, default_value = "en", value_parser = ["en", "zh"])]
    lang: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    entry::run_to_exit("learning-bench", 2, None, run(&args))
}

/// Evolution runs that added nothing, or refused a proposal, and why.
async fn refused(target: &Target) {
    let path = "/api/skills/log?limit=200";
    match metaclaw_e2e::bench::learning::http::admin(target.addr, &target.admin_token, path).await {
        Ok(log) => {
            for e in log["events"].as_array().into_iter().flatten() {
                let refused = e["rejected"].as_array().is_some_and(|r| !r.is_empty());
                if refused
                    || !e["error"].is_null()
                    || e["added"].as_array().is_none_or(Vec::is_empty)
                {
                    println!(
                        "  skill log: {} added {} improved {} rejected {} error {}",
                        e["outcome"], e["added"], e["improved"], e["rejected"], e["error"]
                    );
                }
            }
        }
        Err(e) => println!("  skill log unavailable: {e:#}"),
    }
}

/// The skill ranking for `task`, for a rule that was not applied.
async fn explain(target: &Target, task: &str) {
    let q: String = task
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let path = format!("/api/skills/search?q={q}");
    match metaclaw_e2e::bench::learning::http::admin(target.addr, &target.admin_token, &path).await
    {
        Ok(v) => {
            let hits: Vec<String> = v["ranked"]
                .as_array()
                .or_else(|| v.as_array())
                .into_iter()
                .flatten()
                .take(5)
                .map(|h| {
                    format!(
                        "{} {:.2} {}",
                        h["name"],
                        h["score"].as_f64().unwrap_or(0.0),
                        h["matched_terms"]
                    )
                })
                .collect();
            println!("  {task:?}: {hits:?}");
        }
        Err(e) => println!("  {task:?}: {e:#}"),
    }
}

fn selected(args: &Args) -> Vec<Setup> {
    let key = |s: Setup| match s {
        Setup::MemoryOnly => "memory",
        Setup::SkillsOnly => "skills",
        Setup::Both => "both",
        Setup::LearningOff => "off",
    };
    Setup::ALL
        .into_iter()
        .filter(|s| args.only.is_empty() || args.only.iter().any(|o| o == key(*s)))
        .collect()
}

async fn run(args: &Args) -> Result<bool> {
    let exe = match &args.metaclaw {
        Some(p) => p.clone(),
        None => entry::sibling("metaclaw")?,
    };
    let (rules, unrelated) = match args.lang.as_str() {
        "zh" => (scenario_zh::RULES, scenario_zh::UNRELATED),
        _ => (scenario::RULES, scenario::UNRELATED),
    };
    println!(
        "{} ({} learner, {})\n",
        report::scenario_line(rules, unrelated.len()),
        args.learner,
        args.lang
    );
    let mut rows: Vec<(Setup, Outcome)> = Vec::new();
    for setup in selected(args) {
        eprintln!("learning-bench: {} …", setup.label());
        let fake = FakeUpstream::start(FakeOptions {
            api_key: Some(UPSTREAM_KEY.into()),
            ..FakeOptions::default()
        })
        .await?;
        run::script(&fake, rules);
        fake.terse_lessons(args.learner == "terse");
        let spec = ProxySpec {
            exe: &exe,
            upstream: fake.addr(),
            upstream_key: UPSTREAM_KEY,
            proxy_key: PROXY_KEY,
            extra_config: setup.yaml(),
            env: &[],
        };
        let proxy = procs::start_proxy(&spec, Duration::from_secs(30)).await?;
        let token = std::fs::read_to_string(proxy.home().join("run/admin_token"))
            .context("reading the admin token")?;
        let target = Target {
            addr: proxy.addr,
            proxy_key: PROXY_KEY.into(),
            admin_token: token.trim().to_string(),
        };
        let wait = Duration::from_secs(args.wait);
        let outcome = run::run(&fake, &target, setup, rules, unrelated, wait).await?;
        if args.json {
            println!(
                "{}",
                serde_json::json!({
                    "setup": setup.label(),
                    "compliance": outcome.compliance(),
                    "tasks": outcome.tasks,
                    "leak_rate": outcome.leak_rate(),
                    "profiled": outcome.profiled,
                    "unrelated": outcome.unrelated,
                    "foreign": outcome.foreign,
                    "memories": outcome.memories,
                    "skills": outcome.skills,
                    "timed_out": outcome.timed_out,
                })
            );
        }
        if args.verbose {
            for (rule, n) in rules.iter().zip(&outcome.complied) {
                println!("{n}/{} {}", rule.tasks.len(), rule.statement);
            }
            for (task, markers) in &outcome.leaks {
                println!("leak: {task:?} got {markers:?}");
            }
            if setup != Setup::LearningOff {
                for task in &outcome.missed {
                    explain(&target, task).await;
                }
            }
            if setup.evolves() {
                refused(&target).await;
            }
        }
        drop(proxy);
        fake.shutdown().await;
        rows.push((setup, outcome));
    }
    println!("{}", report::table(&rows));
    println!("{}", report::by_kind(rules, &rows));
    Ok(rows.iter().all(|(s, o)| report::meets(*s, o)))
}
