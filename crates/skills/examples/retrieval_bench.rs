//! Retrieval latency: `cargo run --release -p metaclaw-skills --example retrieval_bench`.
//!
//! Builds the index for the built-in bank (or 44 synthetic skills when `skills/` is absent)
//! and for 10,000 synthetic skills, runs realistic queries against each, and prints the
//! p50/p99 latency of `Retriever::retrieve`.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::time::Instant;

use metaclaw_skills::retrieval::{RetrievalConfig, Retriever};
use metaclaw_skills::{CATEGORIES, Skill, Source, parse_skill};

const QUERIES: usize = 4_000;

const WORDS: &[&str] = &[
    "api",
    "array",
    "audit",
    "backup",
    "batch",
    "benchmark",
    "branch",
    "budget",
    "build",
    "cache",
    "calendar",
    "chart",
    "client",
    "cluster",
    "commit",
    "config",
    "container",
    "cron",
    "csv",
    "dashboard",
    "database",
    "dataset",
    "deadline",
    "debug",
    "deploy",
    "diff",
    "docker",
    "document",
    "email",
    "encoding",
    "endpoint",
    "error",
    "event",
    "export",
    "feedback",
    "file",
    "flight",
    "formula",
    "function",
    "git",
    "graph",
    "handler",
    "hotel",
    "index",
    "invoice",
    "itinerary",
    "json",
    "kernel",
    "key",
    "latency",
    "leak",
    "library",
    "lint",
    "log",
    "meeting",
    "memory",
    "merge",
    "message",
    "metric",
    "migration",
    "model",
    "module",
    "network",
    "news",
    "notebook",
    "parser",
    "password",
    "payment",
    "performance",
    "permission",
    "pipeline",
    "plan",
    "plugin",
    "policy",
    "profile",
    "prompt",
    "query",
    "queue",
    "recipe",
    "refactor",
    "regression",
    "release",
    "report",
    "request",
    "resume",
    "retry",
    "review",
    "schedule",
    "schema",
    "script",
    "secret",
    "server",
    "session",
    "shell",
    "socket",
    "spreadsheet",
    "sql",
    "stack",
    "status",
    "summary",
    "table",
    "test",
    "thread",
    "timeout",
    "token",
    "trace",
    "travel",
    "upgrade",
    "upload",
    "user",
    "vector",
    "webhook",
    "workflow",
    "yaml",
];

const SYLLABLES: &[&str] = &["ka", "lo", "mi", "ra", "tu", "zen", "no", "pa", "shi", "an"];

const TEMPLATES: &[&str] = &[
    "how do I fix the {} in my {} when the {} fails",
    "can you write a {} for the {} {}",
    "my {} keeps timing out after the {} {} change, any idea why?",
    "summarize the {} and the {} from this {}",
    "please review this {} before I {} the {}",
    "hi",
    "thanks, that worked",
];

/// xorshift64: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }

    /// A third of the time a common technical word, otherwise one of 10,000 pseudo-words
    /// drawn with a skew towards low indices, so the vocabulary has a long tail as a real
    /// bank's does (a bank made only of common words would make every term a stopword).
    fn word(&mut self) -> String {
        if self.next().is_multiple_of(3) {
            return WORDS[self.next() % WORDS.len()].to_owned();
        }
        let (a, b) = (self.next() % 10_000, self.next() % 10_000);
        let mut i = a * b / 10_000;
        let mut w = String::new();
        for _ in 0..4 {
            w.push_str(SYLLABLES[i % SYLLABLES.len()]);
            i /= SYLLABLES.len();
        }
        w
    }

    fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }
}

fn synthetic_bank(n: usize) -> Vec<Skill> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|i| Skill {
            name: format!("{}-{}-{i}", rng.word(), rng.word()),
            description: format!("Use when {}.", rng.words(14)),
            category: CATEGORIES[i % CATEGORIES.len()].to_owned(),
            tags: (0..5).map(|_| rng.word()).collect(),
            always: false,
            disabled: false,
            source: Source::User,
            provenance: None,
            body: rng.words(250),
            path: None,
        })
        .collect()
}

fn builtin_bank() -> Option<Vec<Skill>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills");
    let skills: Vec<Skill> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| {
            let path = e.ok()?.path().join("SKILL.md");
            let text = std::fs::read_to_string(&path).ok()?;
            parse_skill(&text, Some(&path)).ok().map(|(s, _)| s)
        })
        .collect();
    (!skills.is_empty()).then_some(skills)
}

/// Labelled fixture queries, then templated ones, until there are `QUERIES`.
fn queries() -> Vec<String> {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/queries.json");
    let mut out: Vec<String> = std::fs::read_to_string(fixture)
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<serde_json::Value>>(&t).ok())
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v["query"].as_str().map(str::to_owned))
        .collect();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    while out.len() < QUERIES {
        let template = TEMPLATES[rng.next() % TEMPLATES.len()];
        let mut q = String::new();
        for (i, part) in template.split("{}").enumerate() {
            if i > 0 {
                q.push_str(&rng.word());
            }
            q.push_str(part);
        }
        out.push(q);
    }
    out
}

fn run(label: &str, skills: &[Skill], queries: &[String]) {
    let started = Instant::now();
    let retriever = Retriever::new(skills, RetrievalConfig::default());
    let build = started.elapsed();
    // Warm caches so the first queries do not measure page faults.
    let mut returned = 0usize;
    for q in queries.iter().take(100) {
        returned += retriever.retrieve(q).len();
    }
    let mut micros: Vec<f64> = queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            returned += retriever.retrieve(q).len();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    micros.sort_by(f64::total_cmp);
    let pct = |p: f64| micros[((micros.len() - 1) as f64 * p) as usize];
    println!(
        "{label}: {} skills, index built in {:.1} ms, {} queries: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs ({returned} hits)",
        retriever.index.len(),
        build.as_secs_f64() * 1e3,
        micros.len(),
        pct(0.5),
        pct(0.99),
        pct(1.0),
    );
}

fn main() {
    let queries = queries();
    match builtin_bank() {
        Some(bank) => run("built-in bank", &bank, &queries),
        None => run("synthetic bank", &synthetic_bank(44), &queries),
    }
    run("synthetic 10k", &synthetic_bank(10_000), &queries);
}
