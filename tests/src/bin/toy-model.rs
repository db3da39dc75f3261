//! The toy chat model's tokenizer for tests outside Rust (the Python SDK tests): writes its
//! files into a directory and prints `{"vocab_size", "im_end"}` as JSON, or prints the token
//! ids of a text (`--encode`) as a JSON list, so a test can script the fake backend's
//! completions.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use metaclaw_e2e::toy_model;
use serde_json::json;

#[derive(Parser)]
#[command(about = "The toy model's tokenizer files and token ids, for MetaClaw tests")]
struct Args {
    /// Directory to write `tokenizer.json` and `tokenizer_config.json` into (created if
    /// missing), e.g. `$METACLAW_HOME/models/Toy/toy-model`.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print the token ids of this text instead (special tokens map to their ids).
    #[arg(long)]
    encode: Option<String>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let toy = toy_model::build()?;
    let answer = match (args.encode, args.dir) {
        (Some(text), _) => json!(toy.encode(&text)),
        (None, Some(dir)) => {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join("tokenizer.json"), &toy.tokenizer_json)?;
            std::fs::write(
                dir.join("tokenizer_config.json"),
                &toy.tokenizer_config_json,
            )?;
            json!({"vocab_size": toy.vocab_size, "im_end": toy.im_end})
        }
        (None, None) => anyhow::bail!("give --dir DIR or --encode TEXT"),
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{answer}")?;
    out.flush()?;
    Ok(())
}
