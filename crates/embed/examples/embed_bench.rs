//! Embedding latency and memory of a model folder or zip.
//!
//!   cargo run --release -p metaclaw-embed --example embed_bench -- <model folder or .zip>
//!
//! Prints load time, resident memory after loading, and p50/p99 latency of embedding short
//! queries one at a time (the retrieval path), then the throughput of batches, then queries
//! while an index is being embedded, in the shared pool and on the background thread.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use metaclaw_embed::{Embedder, ModelStore};

const QUERIES: [&str; 8] = [
    "How do I reset my password when the recovery email no longer works for my account?",
    "Write every timestamp in ISO 8601 with the +08:00 offset in all the reports we send",
    "Which of my projects used the Postgres database and what was the migration plan for it?",
    "Remind me what we decided about the deployment schedule for the mobile app last week",
    "请帮我总结一下上周关于数据库迁移的讨论，并列出还没有完成的任务和负责人",
    "The user prefers short answers with code examples and no long explanations at all",
    "What is the name of the library we chose for parsing the configuration files, and why?",
    "Summarise the meeting notes from this morning and send them to the whole team",
];
const ROUNDS: usize = 50;

fn main() {
    let source = PathBuf::from(std::env::args().nth(1).expect("usage: embed_bench <model>"));
    let rss_before = rss_kib();
    let start = Instant::now();
    let (_scratch, model) = if source.is_dir() {
        (None, Embedder::load(&source).unwrap())
    } else {
        let scratch = tempfile::tempdir().unwrap();
        let store = ModelStore::new(scratch.path());
        store.import(&source, "bench").unwrap();
        let start = Instant::now();
        let model = store.load("bench").unwrap();
        println!("import done; load alone {:?}", start.elapsed());
        (Some(scratch), model)
    };
    println!(
        "model {} ({} dims, max {} tokens)",
        model.model_id(),
        model.dimension(),
        model.max_tokens()
    );
    println!("load {:?}", start.elapsed());
    println!(
        "RSS after load {} MiB (before {} MiB, peak {} MiB)",
        rss_kib() / 1024,
        rss_before / 1024,
        hwm_kib() / 1024
    );

    model.embed(&QUERIES).unwrap(); // warm-up
    let mut times: Vec<Duration> = Vec::with_capacity(ROUNDS * QUERIES.len());
    for _ in 0..ROUNDS {
        for q in QUERIES {
            let t = Instant::now();
            model.embed_one(q).unwrap();
            times.push(t.elapsed());
        }
    }
    times.sort();
    let pct = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
    println!(
        "one query (~15-20 words) x{}: p50 {:?}  p99 {:?}  max {:?}",
        times.len(),
        pct(0.5),
        pct(0.99),
        times[times.len() - 1]
    );

    for q in QUERIES {
        let mut t: Vec<Duration> = (0..30)
            .map(|_| {
                let t = Instant::now();
                model.embed_one(q).unwrap();
                t.elapsed()
            })
            .collect();
        t.sort();
        println!(
            "  {:>3} tokens, {:>2} words: p50 {:?}",
            model.token_count(q).unwrap(),
            q.split_whitespace().count(),
            t[15]
        );
    }

    let batch: Vec<&str> = QUERIES.iter().cycle().take(64).copied().collect();
    let t = Instant::now();
    model.embed(&batch).unwrap();
    let per = t.elapsed() / batch.len() as u32;
    println!(
        "batch of {}: {:?} total, {:?} per text",
        batch.len(),
        t.elapsed(),
        per
    );

    // A query while an index is being embedded, as when memories are indexed during a chat:
    // the index through `embed` (rayon's global pool, normal priority: how indexing ran
    // before it had a thread of its own) and through `embed_in_background`.
    let docs: Vec<&str> = QUERIES.iter().cycle().take(32).copied().collect();
    for (label, background) in [
        ("while indexing through embed", false),
        ("while indexing through embed_in_background", true),
    ] {
        let stop = AtomicBool::new(false);
        let times = std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    if background {
                        model.embed_in_background(&docs).unwrap();
                    } else {
                        model.embed(&docs).unwrap();
                    }
                }
            });
            let mut times: Vec<Duration> = (0..ROUNDS * 2)
                .map(|i| {
                    let t = Instant::now();
                    model.embed_one(QUERIES[i % QUERIES.len()]).unwrap();
                    t.elapsed()
                })
                .collect();
            stop.store(true, Ordering::Relaxed);
            times.sort();
            times
        });
        let pct = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
        println!(
            "one query {label} x{}: p50 {:?}  p99 {:?}",
            times.len(),
            pct(0.5),
            pct(0.99)
        );
    }
    println!("RSS at end {} MiB", rss_kib() / 1024);
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn rss_kib() -> u64 {
    status_kib("VmRSS:")
}

fn hwm_kib() -> u64 {
    status_kib("VmHWM:")
}
