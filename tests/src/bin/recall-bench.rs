#![allow(clippy::print_stdout, clippy::print_stderr)]
//! Long-conversation recall: MetaClaw's memory search against a plain BM25, on the
//! conversations in `tests/data/recall/`.
//!
//! Every turn of a conversation becomes one episodic unit in a fresh database; each labelled
//! question is searched by both methods and scored by the share of its evidence turns in the
//! top 5 and top 10. Prints a Markdown table (overall, per category, per language, per
//! conversation); `--json` prints everything as JSON, `--verbose` lists MetaClaw's misses.
//! `--model PATH` (a sentence-transformers folder or its zip) also runs hybrid search, the
//! lexical candidates fused with the model's nearest units, and prints both side by side.
//! Exits 0, or 1 when `--min-recall10` / `--min-ratio` is given and missed (2 on errors).
//!
//! `cargo build --release -p metaclaw-e2e --bin recall-bench && target/release/recall-bench`

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use metaclaw_e2e::bench::recall::data::{self, Conversation};
use metaclaw_e2e::bench::recall::report::{self, Summary};
use metaclaw_e2e::bench::recall::run;
use metaclaw_e2e::bench::recall::vectors::{Embedded, NoVectors, QueryVectors};
use metaclaw_embed::{Embedder, ModelStore};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Vectors {
    /// Lexical search only.
    None,
}

#[derive(Parser, Debug)]
#[command(about = "Long-conversation memory recall: MetaClaw's search against BM25")]
struct Args {
    /// Folder of conversation files (*.json).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Only these conversations (ids such as c3; repeatable).
    #[arg(long = "conversation", short = 'c')]
    conversations: Vec<String>,
    /// The semantic source passed to search.
    #[arg(long, value_enum, default_value = "none")]
    vectors: Vectors,
    /// An embedding model (folder or zip, e.g. from `scripts/test-model.sh`): also run
    /// hybrid search with it, in the same run.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Print the whole result as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Also print every question where MetaClaw missed evidence.
    #[arg(long)]
    verbose: bool,
    /// Exit 1 when MetaClaw's overall recall@10 is below this (0..=1).
    #[arg(long)]
    min_recall10: Option<f64>,
    /// Exit 1 when MetaClaw's overall recall@10 over BM25's is below this.
    #[arg(long)]
    min_ratio: Option<f64>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("recall-bench: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<bool> {
    let dir = args.data.clone().unwrap_or_else(data::default_dir);
    let mut convs = data::load_dir(&dir)?;
    if !args.conversations.is_empty() {
        convs.retain(|c| args.conversations.contains(&c.id));
        anyhow::ensure!(!convs.is_empty(), "no conversation with those ids");
    }
    let mut vectors: Box<dyn QueryVectors> = match args.vectors {
        Vectors::None => Box::new(NoVectors),
    };
    let policy = run::policy(vectors.as_ref());
    let summary = run_all(&convs, vectors.as_mut(), &policy)?;
    let hybrid = match &args.model {
        Some(path) => {
            let embedder = load_model(path)?;
            let name = embedder.model_id().to_owned();
            let mut vectors = Embedded::new(name, move |texts: &[&str]| {
                embedder.embed(texts).map_err(anyhow::Error::from)
            });
            let mut policy = run::policy(&vectors);
            policy.min_similarity = run::LOCAL_MIN_SIMILARITY;
            Some(run_all(&convs, &mut vectors, &policy)?)
        }
        None => None,
    };
    if args.json {
        let out = match &hybrid {
            Some(h) => serde_json::json!({ "lexical": &summary, "hybrid": h }),
            None => serde_json::to_value(&summary)?,
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        if args.verbose {
            println!("{}", report::misses(&summary, &convs));
        }
        println!("{}", report::markdown(&summary));
        if let Some(hybrid) = &hybrid {
            println!("{}", report::hybrid_markdown(&summary, hybrid));
        }
    }
    let Some(overall) = summary.overall() else {
        return Ok(true);
    };
    let mut met = true;
    if let Some(min) = args.min_recall10
        && overall.metaclaw.r10 < min
    {
        eprintln!(
            "recall-bench: MetaClaw recall@10 {:.3} is below {min}",
            overall.metaclaw.r10
        );
        met = false;
    }
    if let Some(min) = args.min_ratio {
        let ratio = overall.ratio_r10.unwrap_or(f64::INFINITY);
        if ratio < min {
            eprintln!("recall-bench: recall@10 ratio {ratio:.3} is below {min}");
            met = false;
        }
    }
    Ok(met)
}

/// Every conversation searched with `vectors` as the semantic source, under `policy`.
fn run_all(
    convs: &[Conversation],
    vectors: &mut dyn QueryVectors,
    policy: &metaclaw_memory::RetrievalPolicy,
) -> Result<Summary> {
    let started = Instant::now();
    let mut results = Vec::new();
    for conv in convs {
        results.extend(run_one(conv, vectors, policy)?);
    }
    Ok(Summary::new(
        vectors.name(),
        convs,
        results,
        started.elapsed().as_secs_f64(),
    ))
}

/// A model folder is loaded as it is; anything else (a zip) is installed into a temporary
/// model store first.
fn load_model(path: &Path) -> Result<Embedder> {
    if path.join("config.json").is_file() {
        return Ok(Embedder::load(path)?);
    }
    let root = tempfile::tempdir()?;
    let store = ModelStore::new(root.path());
    store.import(path, "bench")?;
    Ok(store.load("bench")?)
}

fn run_one(
    conv: &Conversation,
    vectors: &mut dyn QueryVectors,
    policy: &metaclaw_memory::RetrievalPolicy,
) -> Result<Vec<run::QuestionResult>> {
    eprintln!(
        "recall-bench: {} ({} turns, {} questions) …",
        conv.id,
        conv.turns().count(),
        conv.questions.len()
    );
    run::run_conversation(conv, vectors, policy)
}
