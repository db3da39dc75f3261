//! Runs the fake Tinker/Weaver backend (and its fake Hugging Face host) as a process, for
//! tests that drive the real binary. Prints `PORT=<n>` once it is listening, then serves
//! until SIGTERM/SIGINT or until standard input closes when it is a pipe, socket or
//! terminal (so a parent that dies takes the fake with it).

use clap::Parser;
use metaclaw_e2e::fake_tinker::{FakeTinker, FakeTinkerOptions};

#[derive(Parser)]
#[command(about = "Fake Tinker/MinT/Weaver training backend for MetaClaw tests")]
struct Args {
    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Key required from clients (X-API-Key, or X-WEAVER-API-KEY on Weaver routes).
    #[arg(long)]
    api_key: Option<String>,
    /// Size of the toy model's vocabulary (tokens 0..N).
    #[arg(long, default_value_t = 64)]
    vocab_size: u32,
    /// Token id that ends sampling (e.g. the test tokenizer's `<|im_end|>`).
    #[arg(long)]
    eos_token: Option<u32>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let mut opts = FakeTinkerOptions {
        vocab_size: args.vocab_size,
        eos_token: args.eos_token,
        ..FakeTinkerOptions::default()
    };
    if let Some(key) = args.api_key {
        opts.api_key = key;
    }
    let fake = FakeTinker::start_on_port(opts, args.port).await?;
    metaclaw_e2e::fake_process::announce_and_wait(fake.addr().port()).await?;
    fake.shutdown().await;
    Ok(())
}
