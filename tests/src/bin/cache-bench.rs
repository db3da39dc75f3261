#![allow(clippy::print_stdout, clippy::print_stderr)]
//! Prompt cache: does MetaClaw's injected block cost the agent its provider's prompt cache?
//!
//! Plays an OpenClaw-shaped conversation (OpenAI protocol) and a Claude Code-shaped one
//! (Anthropic protocol), with tool rounds, straight to a fake provider that reports cache
//! usage as a prefix cache does, and through a real `metaclaw` (memory and skills on, the
//! block injected) to each upstream protocol. Prints, per combination, the share of prompt
//! tokens read from the cache direct and through MetaClaw, their ratio, and the share MetaClaw
//! recorded; exits 1 when a ratio is below 0.98.
//!
//! `cargo build -p metaclaw -p metaclaw-e2e && target/debug/cache-bench`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use metaclaw_e2e::bench::cache::report;
use metaclaw_e2e::bench::cache::run::{self, Combo};
use metaclaw_e2e::bench::cache::shapes::MAX_TURNS;
use metaclaw_e2e::bench::entry;

#[derive(Parser, Debug)]
#[command(about = "Prompt-cache reads direct and through MetaClaw, every protocol combination")]
struct Args {
    /// The proxy binary; defaults to `metaclaw` next to this binary.
    #[arg(long)]
    metaclaw: Option<PathBuf>,
    /// User turns per conversation (each with its tool rounds).
    #[arg(long, default_value_t = MAX_TURNS)]
    turns: usize,
    /// Also print every call's figures.
    #[arg(long)]
    verbose: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    entry::run_to_exit("cache-bench", 2, None, run(&args))
}

async fn run(args: &Args) -> Result<bool> {
    let exe = match &args.metaclaw {
        Some(p) => p.clone(),
        None => entry::sibling("metaclaw")?,
    };
    let turns = args.turns.clamp(1, MAX_TURNS);
    let mut rows = Vec::new();
    for combo in Combo::ALL {
        eprintln!(
            "cache-bench: {} client → {} upstream …",
            combo.client.label(),
            combo.upstream.label()
        );
        let outcome = run::run(&exe, combo, turns).await?;
        if args.verbose {
            println!("{}", report::calls(&outcome));
        }
        rows.push(outcome);
    }
    println!("{}", report::table(&rows));
    Ok(rows.iter().all(report::meets))
}
