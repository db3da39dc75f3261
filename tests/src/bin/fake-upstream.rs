//! Runs the fake LLM upstream as a process, for tests written in other languages and for the
//! benchmark. Prints `PORT=<n>` once it is listening, then serves until SIGTERM/SIGINT, or until
//! standard input closes when it is a pipe, socket or terminal (so a parent that dies takes the
//! fake with it; `/dev/null` as stdin does not end it).

use std::time::Duration;

use clap::Parser;
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};

#[derive(Parser)]
#[command(about = "Fake OpenAI/Anthropic upstream for MetaClaw tests")]
struct Args {
    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Key required from clients (Bearer on OpenAI routes, x-api-key on Anthropic routes).
    #[arg(long)]
    api_key: Option<String>,
    /// Benchmark mode: fixed minimal reply, no request recording.
    #[arg(long)]
    fast: bool,
    /// Report prompt-cache usage as a provider's prefix cache would.
    #[arg(long)]
    prefix_cache: bool,
    /// With --fast: milliseconds between a stream's chunks (0: all at once).
    #[arg(long, default_value_t = 0)]
    chunk_gap_ms: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let opts = FakeOptions {
        api_key: args.api_key,
        fast: args.fast,
        prefix_cache: args.prefix_cache,
        chunk_gap: (args.chunk_gap_ms > 0).then(|| Duration::from_millis(args.chunk_gap_ms)),
    };
    let fake = FakeUpstream::start_on_port(opts, args.port).await?;
    metaclaw_e2e::fake_process::announce_and_wait(fake.addr().port()).await?;
    fake.shutdown().await;
    Ok(())
}
