//! A large library for the benchmark: synthetic skills in a home's skills folder and memory
//! units in its database, written before MetaClaw starts there, so every new question is
//! retrieved against (by default) 10,000 skills and 100,000 memories.
//!
//! The text draws on the words of the benchmark's questions, so retrieval finds candidates
//! and renders a block instead of returning early on no match.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use metaclaw_memory::{Kind, MemoryUnit, Source as MemorySource, Status, db};
use metaclaw_skills::{CATEGORIES, Skill, Source, render_skill};
use metaclaw_store::Store;

/// How much to write.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub skills: usize,
    pub memories: usize,
}

/// Writes `size.skills` skill folders into `home/skills` and `size.memories` units into
/// `home/metaclaw.db` (scope `default`, what the proxy retrieves from by default).
pub fn seed(home: &Path, size: Size) -> Result<()> {
    write_skills(&home.join("skills"), size.skills)?;
    write_memories(&home.join("metaclaw.db"), size.memories)
}

const SUBJECTS: &[&str] = &[
    "pytest",
    "import errors",
    "bash scripts",
    "file renaming",
    "pull request review",
    "SQL injection",
    "retrieval augmented generation",
    "flaky CI",
    "integration tests",
    "client email",
    "release planning",
    "REST API design",
    "pagination",
    "database migration",
    "column renames",
    "CSV analysis",
    "sales by region",
    "two-factor authentication",
    "password managers",
    "memory leaks",
    "production services",
    "backups",
    "notes folders",
    "borrow checker errors",
    "commit messages",
    "race conditions",
    "caches",
    "refactoring",
    "long functions",
];

/// The services the memories name; library questions name them too.
pub const SERVICES: &[&str] = &[
    "billing",
    "checkout",
    "search",
    "auth",
    "gateway",
    "ledger",
    "notifier",
    "scheduler",
    "exporter",
    "reporting",
    "inventory",
    "payments",
    "invoices",
    "webhooks",
    "mailer",
    "backup",
];

const TOOLS: &[&str] = &[
    "PostgreSQL",
    "Redis",
    "Docker",
    "GitHub Actions",
    "pytest",
    "cargo",
    "Grafana",
    "Terraform",
    "rsync",
    "cron",
];

/// A deterministic generator (xorshift64*), so every run seeds the same library.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

fn write_skills(dir: &Path, count: usize) -> Result<()> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for i in 0..count {
        let (subject, other) = (rng.pick(SUBJECTS), rng.pick(SUBJECTS));
        let (service, tool) = (rng.pick(SERVICES), rng.pick(TOOLS));
        let name = format!("team-{}-{i:05}", subject.replace(' ', "-").to_lowercase());
        let body = format!(
            "# {subject} on {service}\n\n## Steps\n1. Reproduce the {subject} problem on the \
             {service} service with {tool} before changing anything.\n2. Read what {tool} \
             reports and compare it with the last good run.\n3. Change one thing at a time; \
             when {other} is involved, check it separately.\n4. Write down what fixed it in \
             the {service} runbook.\n"
        );
        let skill = Skill {
            name: name.clone(),
            description: format!(
                "Use when the user works on {subject} in the {service} service with {tool}."
            ),
            category: CATEGORIES[i % CATEGORIES.len()].to_owned(),
            tags: vec![subject.to_owned(), service.to_owned(), tool.to_owned()],
            always: false,
            disabled: false,
            source: Source::User,
            provenance: None,
            body,
            path: None,
            extra: Default::default(),
        };
        let folder = dir.join(&name);
        std::fs::create_dir_all(&folder)
            .with_context(|| format!("creating {}", folder.display()))?;
        std::fs::write(folder.join("SKILL.md"), render_skill(&skill)?)
            .with_context(|| format!("writing {}", folder.display()))?;
    }
    Ok(())
}

fn write_memories(db_path: &Path, count: usize) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut jsonl = Vec::with_capacity(count * 400);
    for i in 0..count {
        let (subject, service, tool) = (rng.pick(SUBJECTS), rng.pick(SERVICES), rng.pick(TOOLS));
        let (kind, content) = match i % 4 {
            0 => (
                Kind::Preference,
                format!("The user prefers {tool} for {subject} on the {service} service."),
            ),
            1 => (
                Kind::ProjectState,
                format!(
                    "The {service} service moved its {subject} checks to {tool} in sprint {}.",
                    i % 97
                ),
            ),
            2 => (
                Kind::Episodic,
                format!(
                    "Last time {subject} broke in {service}, the cause was a {tool} setting; rolling it back fixed it."
                ),
            ),
            _ => (
                Kind::Semantic,
                format!("In the {service} team, {subject} questions go to the owner of {tool}."),
            ),
        };
        let created_ms = now_ms - (count - i) as i64 * 1_000;
        let unit = MemoryUnit {
            id: format!("{created_ms:013x}{i:07x}"),
            scope: "default".into(),
            kind,
            content,
            summary: String::new(),
            fact_key: None,
            importance: 0.3 + (i % 7) as f32 / 10.0,
            confidence: 0.8,
            pinned: false,
            status: Status::Active,
            superseded_by: None,
            source: MemorySource::Extracted,
            source_session: Some(format!("seed-{}", i / 40)),
            source_turn: Some((i % 40) as u64),
            tags: vec![subject.to_owned()],
            entities: vec![service.to_owned(), tool.to_owned()],
            access_count: 0,
            last_accessed_ms: None,
            created_ms,
            updated_ms: created_ms,
            expires_ms: None,
            version: 1,
        };
        serde_json::to_writer(&mut jsonl, &unit)?;
        jsonl.push(b'\n');
    }
    let mut store = Store::open(db_path).context("opening the library's database")?;
    // The import path (one transaction, every row checked), as `metaclaw memory import` does.
    let report = db::import_jsonl(store.connection_mut(), &jsonl[..], "bench", now_ms)?;
    if let Some((line, why)) = report.errors.first() {
        anyhow::bail!("seeding memory: line {line}: {why}");
    }
    Ok(())
}
