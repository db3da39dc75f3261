//! Retrieval latency: `cargo run --release -p metaclaw-skills --example retrieval_bench`.
//!
//! Builds the index for the built-in bank (or 44 synthetic skills when `skills/` is absent)
//! and for 10,000 synthetic skills, runs realistic queries against each, and prints the
//! p50/p99 latency of `Retriever::retrieve` alone and of a whole turn's work (retrieval and
//! rendering the block within the default token budget).
#![allow(clippy::print_stdout)]

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use metaclaw_skills::retrieval::{RetrievalConfig, Retriever};
use metaclaw_skills::{CATEGORIES, Skill, Source, parse_skill, render_skills};

const QUERIES: usize = 4_000;
/// `injection.token_budget`'s default.
const TOKEN_BUDGET: usize = 1200;

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
            extra: Default::default(),
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

/// What one turn costs the engine: retrieval, then rendering what it found into the block
/// within the default token budget (as `ContextInjector::build` does).
fn turn(retriever: &Retriever, by_name: &HashMap<&str, &Skill>, query: &str) -> usize {
    let hits = retriever.retrieve(query);
    let chosen = hits
        .iter()
        .filter_map(|h| by_name.get(h.name.as_str()).copied());
    render_skills(chosen, TOKEN_BUDGET).map_or(0, |r| r.skills.len())
}

fn percentiles(mut micros: Vec<f64>) -> (f64, f64, f64) {
    micros.sort_by(f64::total_cmp);
    let pct = |p: f64| micros[((micros.len() - 1) as f64 * p) as usize];
    (pct(0.5), pct(0.99), pct(1.0))
}

fn run(label: &str, skills: &[Skill], queries: &[String], config: RetrievalConfig) {
    let started = Instant::now();
    let retriever = Retriever::new(skills, config);
    let build = started.elapsed();
    let by_name: HashMap<&str, &Skill> = skills.iter().map(|s| (s.name.as_str(), s)).collect();
    // Warm caches so the first queries do not measure page faults.
    let mut returned = 0usize;
    for q in queries.iter().take(100) {
        returned += turn(&retriever, &by_name, q);
    }
    let timed = |f: &dyn Fn(&str) -> usize, returned: &mut usize| {
        let micros: Vec<f64> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                *returned += f(q);
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        percentiles(micros)
    };
    let (r50, r99, rmax) = timed(&|q| retriever.retrieve(q).len(), &mut returned);
    let mut injected = 0usize;
    let (t50, t99, tmax) = timed(&|q| turn(&retriever, &by_name, q), &mut injected);
    println!(
        "{label}: {} skills, index built in {:.1} ms, {} queries\n  retrieval:             p50 {r50:.1} µs, p99 {r99:.1} µs, max {rmax:.1} µs ({returned} hits)\n  retrieval + rendering: p50 {t50:.1} µs, p99 {t99:.1} µs, max {tmax:.1} µs ({injected} skills injected)",
        retriever.index.len(),
        build.as_secs_f64() * 1e3,
        queries.len(),
    );
}

fn main() {
    let queries = queries();
    let defaults = RetrievalConfig::default();
    match builtin_bank() {
        Some(bank) => run("built-in bank", &bank, &queries, defaults.clone()),
        None => run(
            "synthetic bank",
            &synthetic_bank(44),
            &queries,
            defaults.clone(),
        ),
    }
    let big = synthetic_bank(10_000);
    run("synthetic 10k", &big, &queries, defaults);
    // Random pseudo-words rarely pass the thresholds; without them every turn renders
    // top_k skills, the worst case for rendering.
    let worst = RetrievalConfig {
        min_score: 0.0,
        min_relative: 0.0,
        ..RetrievalConfig::default()
    };
    run("synthetic 10k, thresholds off", &big, &queries, worst);
}
