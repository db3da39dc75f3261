//! Memory retrieval latency at scale:
//! `cargo run --release -p metaclaw-memory --example memory_bench [-- UNITS [QUERIES [TURNS]]]`.
//!
//! Creates a temporary database with `Store::open`, inserts UNITS (default 100,000) realistic
//! units into one scope through `db::insert` (one transaction per unit, as extraction does;
//! mixed kinds, a few pinned, about 3% Chinese), then runs QUERIES (default 2,000) realistic
//! retrieval queries (short questions, long pasted messages, Chinese, queries matching
//! nothing) on a read-only connection. Prints insert throughput, database size per 10,000
//! units, and p50/p99/max of `search`, `pinned` and the whole `retrieve_for_prompt` (also
//! per query class).
//!
//! Then extraction throughput: TURNS (default 2,000) generated conversation turns, in
//! sessions of 8, go through the background path the engine runs without an extraction
//! model (`extract_rules` and the working summary, `reconcile_batch` against the fact-key
//! and full-text neighbours of each candidate, then the writes of `apply`), on a copy of
//! the database so the 100,000 units stay untouched. Prints turns/s and candidates/s.
//!
//! Set `METACLAW_BENCH_KEEP=1` to keep the database for inspection, and
//! `METACLAW_BENCH_DB=/path/metaclaw.db` to build it there once and reuse it on later runs.
//! `METACLAW_BENCH_DUMP=/path/out.txt` writes every query's hits (ids, scores, matched
//! terms, reasons) and rendered block, to check that a speed-up changed no result.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::time::{Duration, Instant};

use std::fmt::Write as _;

use metaclaw_memory::db::UnitPatch;
use metaclaw_memory::extract::{self, TurnText};
use metaclaw_memory::{
    Candidate, Decision, Kind, MemoryUnit, NewUnit, RetrievalPolicy, SearchQuery, Source, db,
    pinned, reconcile_batch, retrieve_for_prompt, search,
};
use metaclaw_store::Store;
use rusqlite::Connection;

const SCOPE: &str = "default";
/// The memory part of the default shared injection budget.
const BUDGET_TOKENS: usize = 800;
const DAY_MS: i64 = 86_400_000;
const NOW: i64 = 1_767_225_600_000;
/// Units written through `db::insert` (the rest are bulk-inserted).
const SLOW_INSERTS: usize = 2_000;

const SERVICES: &[&str] = &[
    "billing",
    "checkout",
    "search",
    "auth",
    "gateway",
    "ledger",
    "notifier",
    "scheduler",
    "exporter",
    "importer",
    "reporting",
    "analytics",
    "inventory",
    "catalog",
    "payments",
    "invoices",
    "onboarding",
    "profile",
    "media",
    "thumbnailer",
    "crawler",
    "indexer",
    "webhooks",
    "mailer",
    "metrics",
    "audit",
    "sync",
    "backup",
    "archive",
    "feeds",
];
const TOOLS: &[&str] = &[
    "PostgreSQL",
    "Redis",
    "Kafka",
    "RabbitMQ",
    "SQLite",
    "Docker",
    "Kubernetes",
    "Terraform",
    "Ansible",
    "Nginx",
    "Caddy",
    "Grafana",
    "Prometheus",
    "Sentry",
    "GitHub Actions",
    "GitLab CI",
    "pytest",
    "cargo",
    "npm",
    "pnpm",
    "Poetry",
    "uv",
    "Bazel",
    "Make",
    "Vite",
    "webpack",
    "esbuild",
    "Jest",
    "Playwright",
    "Cypress",
    "ClickHouse",
    "DuckDB",
    "S3",
    "MinIO",
    "Vault",
    "Consul",
    "Helm",
    "ArgoCD",
    "Datadog",
    "OpenTelemetry",
];
const LANGS: &[&str] = &[
    "Rust",
    "Python",
    "TypeScript",
    "Go",
    "Java",
    "Kotlin",
    "Swift",
    "Ruby",
    "Elixir",
    "C++",
    "Bash",
    "SQL",
    "Scala",
    "Haskell",
    "Zig",
    "Lua",
];
const ENVS: &[&str] = &[
    "staging",
    "production",
    "dev",
    "preview",
    "canary",
    "eu-west-1",
    "us-east-2",
];
const PEOPLE: &[&str] = &[
    "Alice", "Bob", "Chen", "Dana", "Emeka", "Fatima", "Goran", "Hiro", "Ines", "Jonas",
];
const TOPICS: &[&str] = &[
    "timeouts",
    "retries",
    "rate limits",
    "pagination",
    "caching",
    "logging",
    "tracing",
    "migrations",
    "indexes",
    "backups",
    "secrets",
    "certificates",
    "feature flags",
    "dependency upgrades",
    "flaky tests",
    "code review",
    "release notes",
    "error handling",
    "timezones",
    "date formats",
    "naming",
    "formatting",
    "linting",
    "benchmarks",
    "profiling",
    "memory leaks",
    "deadlocks",
    "connection pools",
    "queues",
    "cron jobs",
];

const TEMPLATES: &[(Kind, &str)] = &[
    (
        Kind::Preference,
        "The user prefers {lang} for new {service} tooling.",
    ),
    (
        Kind::Preference,
        "Always use {tool} for {topic} in the {service} service.",
    ),
    (
        Kind::Preference,
        "Keep answers short; show the {lang} code first, explanations after.",
    ),
    (
        Kind::Preference,
        "Write dates in ISO 8601 with a timezone offset in {service} logs.",
    ),
    (
        Kind::Preference,
        "Never run {tool} commands against {env} without asking first.",
    ),
    (
        Kind::Preference,
        "{person} wants pull requests under 400 lines for the {service} repo.",
    ),
    (
        Kind::Preference,
        "Use {n} spaces of indentation in {lang} files.",
    ),
    (
        Kind::Preference,
        "Prefer {tool} over {tool2} when choosing tools for {topic}.",
    ),
    (
        Kind::ProjectState,
        "The {service} service runs on {tool} in {env}.",
    ),
    (
        Kind::ProjectState,
        "The {service} service is written in {lang} and deployed with {tool}.",
    ),
    (
        Kind::ProjectState,
        "{service} moved from {tool2} to {tool} last sprint; {topic} still pending.",
    ),
    (
        Kind::ProjectState,
        "The {service} database has {n} replicas in {env}.",
    ),
    (
        Kind::ProjectState,
        "{person} owns the {service} service and reviews its {topic} changes.",
    ),
    (
        Kind::ProjectState,
        "CI for {service} uses {tool} with {n} parallel jobs.",
    ),
    (
        Kind::ProceduralObservation,
        "Before changing {topic} in {service}, run the {tool} checks.",
    ),
    (
        Kind::ProceduralObservation,
        "Back up the {service} config before editing it in {env}.",
    ),
    (
        Kind::ProceduralObservation,
        "Run the {lang} formatter before every commit to {service}.",
    ),
    (
        Kind::ProceduralObservation,
        "When {tool} fails in CI, rerun once, then open an issue for {person}.",
    ),
    (
        Kind::Semantic,
        "The {env} cluster for {service} lives behind {tool}.",
    ),
    (
        Kind::Semantic,
        "{tool} version {n}.{m} is pinned in the {service} lockfile.",
    ),
    (
        Kind::Semantic,
        "The {service} API paginates with cursors and a page size of {n}.",
    ),
    (
        Kind::Semantic,
        "{person} is the on-call contact for {service} {topic}.",
    ),
    (
        Kind::Semantic,
        "The {service} team meets on Thursdays to discuss {topic}.",
    ),
    (
        Kind::Semantic,
        "{service} exports land in the {tool} bucket under /{env}/{service}/.",
    ),
    (
        Kind::WorkingSummary,
        "Last session: fixed {topic} in {service} and added {tool} tests; next: {topic2}.",
    ),
    (
        Kind::WorkingSummary,
        "Last session: reviewed {person}'s {lang} patch for {service}; {topic} left open.",
    ),
    (
        Kind::Episodic,
        "We debugged {topic} in {service} on {env}; the cause was a {tool} misconfiguration.",
    ),
    (
        Kind::Episodic,
        "{person} and the user paired on {topic} for the {service} {lang} client.",
    ),
    (
        Kind::Episodic,
        "It took a long time to find why {tool} broke {service} builds in {env}.",
    ),
    (
        Kind::Episodic,
        "The user asked how to speed up {topic} in {service}; we tried {tool}.",
    ),
];

const CJK_TEMPLATES: &[(Kind, &str)] = &[
    (
        Kind::Preference,
        "用户喜欢用 {lang} 写 {service} 的脚本，回答要简短。",
    ),
    (
        Kind::Preference,
        "日期请使用 ISO 8601 时间格式，并且总是带上时区。",
    ),
    (
        Kind::ProjectState,
        "{service} 服务部署在 {env} 环境，数据库是 {tool}。",
    ),
    (
        Kind::ProceduralObservation,
        "修改 {service} 配置之前先备份，然后运行 {tool} 检查。",
    ),
    (
        Kind::Semantic,
        "{person} 负责 {service} 的代码审查和发布流程。",
    ),
    (
        Kind::Episodic,
        "我们一起排查了 {service} 在 {env} 上的超时问题。",
    ),
];

const QUESTIONS: &[&str] = &[
    "what time format should I use in the {service} logs?",
    "how do I deploy {service} to {env}?",
    "which database does {service} use",
    "can you fix the {topic} in the {service} {lang} client",
    "who owns {service}?",
    "write a {lang} script to back up the {service} config",
    "why is {tool} failing in CI again",
    "set up {tool} for {topic}",
    "what did we do last session",
    "review this PR for {service}, especially {topic}",
    "how many replicas does the {service} database have in {env}",
    "migrate {service} from {tool2} to {tool}",
    "explain the pagination of the {service} API",
    "thanks!",
    "ok continue",
];
const CJK_QUESTIONS: &[&str] = &[
    "{service} 服务部署在哪个环境？",
    "我应该用什么时间格式？",
    "谁负责代码审查",
    "时区",
];

/// A small deterministic generator (xorshift64*), so every run benches the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    fn unit(&mut self) -> f32 {
        (self.next() % 1000) as f32 / 1000.0
    }
}

fn fill(rng: &mut Rng, template: &str) -> String {
    let mut out = template.to_owned();
    for (slot, pool) in [
        ("{service}", SERVICES),
        ("{tool2}", TOOLS),
        ("{tool}", TOOLS),
        ("{lang}", LANGS),
        ("{env}", ENVS),
        ("{person}", PEOPLE),
        ("{topic2}", TOPICS),
        ("{topic}", TOPICS),
    ] {
        while out.contains(slot) {
            out = out.replacen(slot, rng.pick(pool), 1);
        }
    }
    let n = (2 + rng.below(30)).to_string();
    let m = rng.below(20).to_string();
    out.replace("{n}", &n).replace("{m}", &m)
}

fn new_unit(rng: &mut Rng, i: usize) -> NewUnit {
    let (kind, template) = if i.is_multiple_of(33) {
        CJK_TEMPLATES[rng.below(CJK_TEMPLATES.len())]
    } else {
        TEMPLATES[rng.below(TEMPLATES.len())]
    };
    let mut content = fill(rng, template);
    if kind == Kind::Episodic || kind == Kind::WorkingSummary {
        // Episodes and summaries run longer.
        for _ in 0..rng.below(3) {
            content.push(' ');
            let extra = TEMPLATES[rng.below(TEMPLATES.len())].1;
            content.push_str(&fill(rng, extra));
        }
    }
    NewUnit {
        scope: SCOPE.into(),
        kind,
        summary: String::new(),
        fact_key: None,
        importance: 0.2 + 0.75 * rng.unit(),
        confidence: 0.5 + 0.5 * rng.unit(),
        pinned: i % 5_000 == 7,
        source: Source::Extracted,
        source_session: Some(format!("session-{}", i / 40)),
        source_turn: Some((i % 40) as u64),
        tags: vec![rng.pick(TOPICS).to_owned()],
        entities: vec![rng.pick(SERVICES).to_owned(), rng.pick(TOOLS).to_owned()],
        expires_ms: None,
        content,
    }
}

/// The kind of query `query(_, i)` makes: 0 short question, 1 long message, 2 Chinese,
/// 3 matching nothing.
fn class(i: usize) -> usize {
    match i % 20 {
        0 => 2,
        1 => 1,
        2 => 3,
        _ => 0,
    }
}

fn query(rng: &mut Rng, i: usize) -> String {
    match i % 20 {
        0 => {
            let q = rng.pick(CJK_QUESTIONS);
            fill(rng, q)
        }
        1 => {
            // A long pasted message: an error log and a question.
            let mut s = String::from("I get this error when running the build:\n");
            for _ in 0..40 {
                s.push_str(&fill(
                    rng,
                    "  at {service}::{topic}::handler ({lang}) {tool} exited with code {n}\n",
                ));
            }
            s.push_str(&fill(
                rng,
                "what is wrong with {service} and how do I fix it?",
            ));
            s
        }
        2 => "zzqx unrelated gibberish vocabulary nobody wrote".to_owned(),
        _ => {
            let q = rng.pick(QUESTIONS);
            fill(rng, q)
        }
    }
}

/// Fills a new database with `units` units and prints what it cost.
fn build(path: &std::path::Path, units: usize, rng: &mut Rng) -> Result<(), Box<dyn Error>> {
    let mut store = Store::open(path)?;

    // The real write path first (one transaction per unit, versions and events included),
    // then the rest in one transaction with the same rows, so the bench builds in seconds.
    let slow = units.min(SLOW_INSERTS);
    let started = Instant::now();
    for i in 0..slow {
        let unit = new_unit(rng, i);
        db::insert(store.connection_mut(), &unit, "bench", created_at(i, units))?;
    }
    let slow_elapsed = started.elapsed();
    let started = Instant::now();
    bulk_insert(store.connection_mut(), rng, slow..units)?;
    let bulk_elapsed = started.elapsed();
    store
        .connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    let pinned_count: i64 = store.connection().query_row(
        "SELECT COUNT(*) FROM memory_units WHERE pinned = 1",
        [],
        |r| r.get(0),
    )?;
    drop(store);
    let size = std::fs::metadata(path)?.len();
    println!("units                  {units} in scope {SCOPE:?} ({pinned_count} pinned)");
    println!(
        "insert, db::insert     {:.0} units/s  ({slow} units, one transaction each)",
        slow as f64 / slow_elapsed.as_secs_f64(),
    );
    println!(
        "insert, bulk           {:.0} units/s  ({} units, one transaction)",
        (units - slow) as f64 / bulk_elapsed.as_secs_f64(),
        units - slow
    );
    println!(
        "database size          {:.1} MB total, {:.2} MB per 10,000 units",
        size as f64 / 1e6,
        size as f64 / 1e6 / (units as f64 / 10_000.0)
    );

    Ok(())
}

fn created_at(i: usize, units: usize) -> i64 {
    NOW - (units - i) as i64 * (365 * DAY_MS / units.max(1) as i64)
}

/// Rows as `db::insert` writes them (unit, version 1, create event), in one transaction.
fn bulk_insert(
    conn: &mut rusqlite::Connection,
    rng: &mut Rng,
    range: std::ops::Range<usize>,
) -> Result<(), Box<dyn Error>> {
    let units = range.end;
    let tx = conn.transaction()?;
    {
        let mut unit_stmt = tx.prepare(
            "INSERT INTO memory_units (id, scope, kind, content, summary, importance,
                 confidence, pinned, source, source_session, source_turn, tags, entities,
                 created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, '', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)",
        )?;
        let mut version_stmt = tx.prepare(
            "INSERT INTO memory_versions (memory_id, version, kind, content, summary,
                 importance, confidence, pinned, tags, entities, status, changed_ms, actor)
             VALUES (?1, 1, ?2, ?3, '', ?4, ?5, ?6, ?7, ?8, 'active', ?9, 'bench')",
        )?;
        let mut event_stmt = tx.prepare(
            "INSERT INTO memory_events (at_ms, memory_id, scope, action, actor, detail)
             VALUES (?1, ?2, ?3, 'create', 'bench', ?4)",
        )?;
        for i in range {
            let u = new_unit(rng, i);
            let at = created_at(i, units);
            let id = format!("{:012x}{:08x}", at, i);
            let tags = serde_json::to_string(&u.tags)?;
            let entities = serde_json::to_string(&u.entities)?;
            let kind = u.kind.as_str();
            unit_stmt.execute(rusqlite::params![
                id,
                u.scope,
                kind,
                u.content,
                f64::from(u.importance),
                f64::from(u.confidence),
                u.pinned,
                u.source.as_str(),
                u.source_session,
                u.source_turn.map(|t| t as i64),
                tags,
                entities,
                at,
            ])?;
            version_stmt.execute(rusqlite::params![
                id,
                kind,
                u.content,
                f64::from(u.importance),
                f64::from(u.confidence),
                u.pinned,
                tags,
                entities,
                at,
            ])?;
            let detail = format!(r#"{{"kind":"{kind}","source":"extracted"}}"#);
            event_stmt.execute(rusqlite::params![at, id, u.scope, detail])?;
        }
    }
    tx.commit()?;
    Ok(())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(idx).copied().unwrap_or_default()
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort();
    println!(
        "{name:<22} p50 {:>8.3} ms   p99 {:>8.3} ms   max {:>8.3} ms",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
        times.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let units: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100_000);
    let queries: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(2_000);
    let turns: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(2_000);
    let dump_path = std::env::var_os("METACLAW_BENCH_DUMP").map(std::path::PathBuf::from);
    let mut dump = String::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    // METACLAW_BENCH_DB=path reuses a database built by an earlier run (and keeps it).
    let reuse = std::env::var_os("METACLAW_BENCH_DB").map(std::path::PathBuf::from);
    let dir = match &reuse {
        Some(p) => p.parent().map(|d| d.to_path_buf()).unwrap_or_default(),
        None => tempfile_dir()?,
    };
    let path = reuse.clone().unwrap_or_else(|| dir.join("metaclaw.db"));
    if path.exists() {
        println!("reusing                {}", path.display());
    } else {
        build(&path, units, &mut rng)?;
    }
    let store = Store::open_read_only(&path)?;
    let conn = store.connection();
    let policy = RetrievalPolicy::default();
    // A generator of their own, so a reused database is queried exactly as a fresh one.
    let mut query_rng = Rng(0x9E37_79B9_7F4A_7C15);
    let texts: Vec<String> = (0..queries).map(|i| query(&mut query_rng, i)).collect();
    // Warm the page cache and statement cache as a running proxy would be.
    for text in texts.iter().take(50) {
        retrieve_for_prompt(conn, SCOPE, text, BUDGET_TOKENS, &policy, NOW)?;
    }
    let (mut t_search, mut t_pinned, mut t_all) = (Vec::new(), Vec::new(), Vec::new());
    let mut by_class: [Vec<Duration>; 4] = Default::default();
    let mut injected = 0usize;
    let mut tokens = 0usize;
    for (i, text) in texts.iter().enumerate() {
        let q = SearchQuery {
            scope: SCOPE.into(),
            text: text.clone(),
            kinds: vec![],
            limit: policy.max_units,
            include_inactive: false,
        };
        let t = Instant::now();
        let hits = search(conn, &q, &policy, NOW)?;
        t_search.push(t.elapsed());
        let t = Instant::now();
        pinned(conn, SCOPE, policy.max_pinned, NOW)?;
        t_pinned.push(t.elapsed());
        let t = Instant::now();
        let block = retrieve_for_prompt(conn, SCOPE, text, BUDGET_TOKENS, &policy, NOW)?;
        let elapsed = t.elapsed();
        t_all.push(elapsed);
        by_class[class(i)].push(elapsed);
        if dump_path.is_some() {
            writeln!(dump, "# query {i}")?;
            for h in &hits {
                writeln!(
                    dump,
                    "{} {:.6} {:?} {}",
                    h.unit.id, h.score, h.matched_terms, h.reason
                )?;
            }
            writeln!(dump, "{}", block.as_ref().map_or("", |b| b.text.as_str()))?;
        }
        if let Some(b) = block {
            injected += b.ids.len();
            tokens += b.tokens;
        }
    }
    println!(
        "queries                {queries} (budget {BUDGET_TOKENS} tokens; avg {:.1} units, {:.0} tokens injected)",
        injected as f64 / queries as f64,
        tokens as f64 / queries as f64
    );
    report("search", t_search);
    report("pinned", t_pinned);
    report("retrieve_for_prompt", t_all);
    for (name, times) in [
        "  short questions",
        "  long messages",
        "  Chinese",
        "  no match",
    ]
    .into_iter()
    .zip(by_class)
    {
        report(name, times);
    }
    drop(store);
    if let Some(p) = &dump_path {
        std::fs::write(p, &dump)?;
        println!("dumped                 {}", p.display());
    }
    if turns > 0 {
        extraction(&path, &dir, turns)?;
    }
    if reuse.is_none() && std::env::var_os("METACLAW_BENCH_KEEP").is_none() {
        std::fs::remove_dir_all(&dir)?;
    } else {
        println!("kept                   {}", path.display());
    }
    Ok(())
}

/// A fresh directory under the system temp dir (examples cannot use dev-dependencies'
/// guards across `main`'s early returns, so this one is removed at the end explicitly).
fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("metaclaw-memory-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Turns per extraction: the engine extracts a session's new turns in one go.
const SESSION_TURNS: usize = 8;
/// As the engine's extraction: units shown to a model (read even by the rules path),
/// neighbours per candidate, and the actor of the writes.
const KNOWN: u32 = 40;
const SIMILAR: usize = 5;
const ACTOR: &str = "extractor";

/// What users say that the rules turn into memories; the rest of a turn is questions and
/// pasted text, which yield nothing.
const STATEMENTS: &[&str] = &[
    "I prefer {lang} for the {service} scripts.",
    "Always run the {tool} checks before touching {topic} in {service}.",
    "We use {tool} for {topic} in {service}.",
    "Remember that {person} owns the {service} {topic}.",
    "From now on, write {lang} examples for {service}.",
    "Never deploy {service} to {env} without asking {person}.",
    "My preference is {n} spaces in {lang} files.",
    "ok, we are using {tool} with {n} replicas for {service} now.",
    "我们使用 {tool} 部署 {service} 服务。",
    "Keep in mind that {service} {topic} go through {tool}.",
];

/// A user message: a question, sometimes preceded by a statement or followed by a log.
fn turn_text(rng: &mut Rng, i: usize) -> String {
    let mut s = String::new();
    if i.is_multiple_of(2) {
        let statement = rng.pick(STATEMENTS);
        s.push_str(&fill(rng, statement));
        s.push(' ');
    }
    let q = rng.pick(QUESTIONS);
    s.push_str(&fill(rng, q));
    if i % 10 == 3 {
        s.push_str("\n```\n");
        for _ in 0..20 {
            s.push_str(&fill(
                rng,
                "{service}::{topic} {tool} exited with code {n}\n",
            ));
        }
        s.push_str("```\n");
    }
    s
}

/// What `apply` did, summed.
#[derive(Default)]
struct Applied {
    added: usize,
    updated: usize,
    superseded: usize,
    ignored: usize,
}

/// Extraction throughput against the built scope, on a copy of the database.
fn extraction(
    path: &std::path::Path,
    dir: &std::path::Path,
    turns: usize,
) -> Result<(), Box<dyn Error>> {
    let copy = dir.join("metaclaw-extraction.db");
    let with = |p: &std::path::Path, suffix: &str| {
        let mut p = p.as_os_str().to_owned();
        p.push(suffix);
        std::path::PathBuf::from(p)
    };
    std::fs::copy(path, &copy)?;
    // Nothing writes the source now, so its file and log make a consistent snapshot.
    if with(path, "-wal").exists() {
        std::fs::copy(with(path, "-wal"), with(&copy, "-wal"))?;
    }
    let result = extraction_on(&copy, turns);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(with(&copy, suffix));
    }
    result
}

fn extraction_on(path: &std::path::Path, turns: usize) -> Result<(), Box<dyn Error>> {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let all: Vec<TurnText> = (0..turns)
        .map(|i| TurnText {
            user: turn_text(&mut rng, i),
            assistant: "Sure — here is how to do that, step by step.".into(),
            session_id: format!("bench-session-{}", i / SESSION_TURNS),
            turn_index: (i % SESSION_TURNS) as u64,
        })
        .collect();
    let mut store = Store::open(path)?;
    let mut applied = Applied::default();
    let mut candidates = 0usize;
    let mut per_session = Vec::new();
    let started = Instant::now();
    for (n, session) in all.chunks(SESSION_TURNS).enumerate() {
        let t = Instant::now();
        let now = NOW + n as i64 * 60_000;
        let session_id = session[0].session_id.clone();
        // The engine reads these for the extraction model's prompt whatever the extractor.
        db::active_in_scope(store.connection(), SCOPE, None, KNOWN)?;
        let mut found = extract::extract_rules(session);
        if let Some(summary) = extract::working_summary(session) {
            found.push(summary);
        }
        candidates += found.len();
        let decisions = {
            let conn = store.connection();
            reconcile_batch(found, |c| similar(conn, c, now))
        };
        apply(
            store.connection_mut(),
            decisions,
            &session_id,
            now,
            &mut applied,
        )?;
        let through = session.last().map_or(0, |t| t.turn_index);
        store.state_set(
            &format!("memory.extracted_through.{session_id}"),
            &through.to_string(),
        )?;
        per_session.push(t.elapsed());
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "extraction             {:.0} turns/s, {:.0} candidates/s  ({turns} turns in sessions of {SESSION_TURNS}, {candidates} candidates: {} added, {} updated, {} superseded, {} ignored)",
        turns as f64 / elapsed,
        candidates as f64 / elapsed,
        applied.added,
        applied.updated,
        applied.superseded,
        applied.ignored,
    );
    report("  per session", per_session);
    Ok(())
}

/// The engine's `similar`: units holding the candidate's slot, then its full-text
/// neighbours of the same kind. A failure only narrows the comparison, as there.
fn similar(conn: &Connection, c: &Candidate, now_ms: i64) -> Vec<MemoryUnit> {
    let mut units = match &c.fact_key {
        Some(key) => db::by_fact_key(conn, SCOPE, key).unwrap_or_default(),
        None => Vec::new(),
    };
    let q = SearchQuery {
        scope: SCOPE.into(),
        text: c.content.clone(),
        kinds: vec![c.kind],
        limit: SIMILAR,
        include_inactive: false,
    };
    for hit in search(conn, &q, &RetrievalPolicy::default(), now_ms).unwrap_or_default() {
        if !units.iter().any(|u| u.id == hit.unit.id) {
            units.push(hit.unit);
        }
    }
    units
}

/// The engine's `apply`: every decision as the same database changes.
fn apply(
    conn: &mut Connection,
    decisions: Vec<(Candidate, Decision)>,
    session: &str,
    now_ms: i64,
    out: &mut Applied,
) -> Result<(), Box<dyn Error>> {
    for (c, decision) in decisions {
        match decision {
            Decision::Ignore { .. } => out.ignored += 1,
            Decision::Add | Decision::AddBesidePinned { .. } => {
                db::insert(conn, &extracted(&c, session), ACTOR, now_ms)?;
                out.added += 1;
            }
            Decision::Supersede { old_id } => {
                let unit = db::insert(conn, &extracted(&c, session), ACTOR, now_ms)?;
                db::supersede(conn, &old_id, &unit.id, ACTOR, now_ms)?;
                out.superseded += 1;
            }
            Decision::Update { id, content } => {
                let patch = UnitPatch {
                    content: Some(content),
                    ..UnitPatch::default()
                };
                db::update(conn, &id, &patch, ACTOR, now_ms, None)?;
                out.updated += 1;
            }
        }
    }
    Ok(())
}

fn extracted(c: &Candidate, session: &str) -> NewUnit {
    NewUnit {
        scope: SCOPE.into(),
        kind: c.kind,
        content: c.content.clone(),
        summary: String::new(),
        fact_key: c.fact_key.clone(),
        importance: c.importance,
        confidence: c.confidence,
        pinned: false,
        source: Source::Rules,
        source_session: Some(session.into()),
        source_turn: c.source_turn,
        tags: c.tags.clone(),
        entities: Vec::new(),
        expires_ms: None,
    }
}
