//! `metaclaw memory …`: read and change what MetaClaw remembers. Reads go straight to the
//! database, so they work whether or not MetaClaw is running (SQLite's WAL lets them run
//! beside the engine). Changes go through the running engine when there is one with memory
//! on (`live`); otherwise they are made on the database, audited under the actor `cli`.

mod live;

use std::io::BufReader;

use metaclaw_engine::config::{Config, EmbeddingSource};
use metaclaw_engine::memory::policies;
use metaclaw_engine::paths::Paths;
use metaclaw_memory::consolidate::{self, ConsolidationPolicy};
use metaclaw_memory::db::{self, ListQuery, UnitPatch};
use metaclaw_memory::{Kind, MemoryUnit, NewUnit, SearchQuery, Source, Status};
use metaclaw_store::Store;
use serde_json::json;

use crate::cli::MemoryCommand;
use crate::exit::{Failure, Outcome};
use crate::output;

const ACTOR: &str = "cli";

fn now() -> i64 {
    metaclaw_engine::clock::now_ms()
}

fn kind(name: &str) -> Result<Kind, Failure> {
    Kind::parse(name).ok_or_else(|| {
        Failure::usage(format!(
            "unknown kind `{name}`: use preference, project_state, procedural_observation, semantic, working_summary or episodic"
        ))
    })
}

pub fn run(paths: &Paths, command: MemoryCommand) -> Outcome {
    let config = Config::load(paths)?.config;
    let local_model = config.skills.embedding_source() == EmbeddingSource::Local;
    let memory_config = config.memory;
    if let Some(done) = live::try_change(paths, &command, memory_config.enabled) {
        return done;
    }
    let default_scope = memory_config.scope.clone();
    let configured = policies::configured(&memory_config, local_model);
    // Opening read-write creates and migrates the database on first use.
    let mut store = Store::open(&paths.db)?;
    match command {
        MemoryCommand::List {
            scope,
            kind: k,
            all,
            limit,
            json: as_json,
        } => {
            let q = ListQuery {
                scope,
                kinds: k.as_deref().map(kind).transpose()?.into_iter().collect(),
                statuses: if all {
                    vec![Status::Active, Status::Superseded, Status::Archived]
                } else {
                    Vec::new()
                },
                limit,
                ..ListQuery::default()
            };
            let page = db::list(store.connection(), &q)?;
            if as_json {
                output::line(serde_json::to_string(&page)?);
                return Ok(());
            }
            for u in &page.units {
                output::line(line(u));
            }
            output::line(format!("{} of {} shown", page.units.len(), page.total));
        }
        MemoryCommand::Search {
            query,
            scope,
            limit,
        } => {
            let q = SearchQuery {
                scope: scope.unwrap_or(default_scope),
                text: query,
                kinds: Vec::new(),
                limit,
                include_inactive: false,
            };
            let policy = db::load_policy(store.connection(), &q.scope)?.unwrap_or(configured);
            let hits = metaclaw_memory::search(store.connection(), &q, &policy, now())?;
            if hits.is_empty() {
                output::line("nothing matches");
            }
            for h in hits {
                output::line(format!("{:>6.3}  {}", h.score, line(&h.unit)));
                output::line(format!("        {}", h.reason));
            }
        }
        MemoryCommand::Show { id } => {
            let unit = db::get(store.connection(), &id)?
                .ok_or_else(|| Failure::error(format!("no memory `{id}`")))?;
            let history = db::history(store.connection(), &id)?;
            output::line(serde_json::to_string_pretty(
                &json!({"unit": unit, "history": history}),
            )?);
        }
        MemoryCommand::Add {
            content,
            kind: k,
            scope,
            pin,
        } => {
            let unit = NewUnit {
                scope: scope.unwrap_or(default_scope),
                kind: kind(&k)?,
                content,
                summary: String::new(),
                fact_key: None,
                importance: 0.8,
                confidence: 1.0,
                pinned: pin,
                source: Source::Manual,
                source_session: None,
                source_turn: None,
                tags: Vec::new(),
                entities: Vec::new(),
                expires_ms: None,
            };
            let u = db::insert(store.connection_mut(), &unit, ACTOR, now())?;
            output::line(format!("remembered {}", u.id));
        }
        MemoryCommand::Edit { id, content } => {
            let patch = UnitPatch {
                content: Some(content),
                ..UnitPatch::default()
            };
            let u = db::update(store.connection_mut(), &id, &patch, ACTOR, now(), None)?;
            output::line(format!("{} is now version {}", u.id, u.version));
        }
        MemoryCommand::Forget { id, purge } => {
            if purge {
                db::purge(store.connection_mut(), &id, ACTOR, now())?;
                output::line(format!("{id} deleted for good"));
            } else {
                db::archive(store.connection_mut(), &id, ACTOR, now())?;
                output::line(format!(
                    "{id} forgotten (restore it from the dashboard, or purge it)"
                ));
            }
        }
        MemoryCommand::Pin { id } => {
            db::set_pinned(store.connection_mut(), &id, true, ACTOR, now())?;
            output::line(format!("{id} pinned"));
        }
        MemoryCommand::Unpin { id } => {
            db::set_pinned(store.connection_mut(), &id, false, ACTOR, now())?;
            output::line(format!("{id} unpinned"));
        }
        MemoryCommand::Export { scope, all } => {
            let mut out = std::io::stdout().lock();
            db::export_jsonl(store.connection(), scope.as_deref(), all, &mut out)?;
        }
        MemoryCommand::Import { file } => {
            let reader = BufReader::new(std::fs::File::open(&file)?);
            let report = db::import_jsonl(store.connection_mut(), reader, "import", now())?;
            output::line(format!(
                "imported {}, already present {}",
                report.imported, report.skipped_existing
            ));
            for (line_no, why) in &report.errors {
                output::line(format!("  line {line_no}: {why}"));
            }
            if !report.errors.is_empty() {
                return Err(Failure::error(format!(
                    "{} line(s) could not be imported",
                    report.errors.len()
                )));
            }
        }
        MemoryCommand::Consolidate { scope } => {
            let scope = scope.unwrap_or(default_scope);
            let steps = consolidate::run(
                store.connection_mut(),
                &scope,
                now(),
                &ConsolidationPolicy::default(),
            )?;
            for step in &steps {
                output::line(serde_json::to_string(step)?);
            }
            output::line(format!("{} change(s) in scope {scope}", steps.len()));
        }
        MemoryCommand::Policy {
            scope,
            history,
            reset,
        } => {
            let scope = scope.unwrap_or(default_scope);
            if reset {
                let reason = "reset to the configured policy by the user (cli)";
                db::save_policy(store.connection_mut(), &scope, &configured, reason, now())?;
            }
            let stored = db::load_policy(store.connection(), &scope)?;
            let source = if stored.is_some() {
                "stored"
            } else {
                "configured"
            };
            let policy = stored.unwrap_or(configured);
            output::line(format!("scope {scope}: {source} policy"));
            output::line(serde_json::to_string_pretty(&policy)?);
            let changes = db::policy_history(store.connection(), &scope, history)?;
            if changes.is_empty() {
                output::line("never changed");
            }
            for c in changes {
                output::line(format!("{}  {}", output::local_time(c.at_ms), c.reason));
            }
        }
        MemoryCommand::Stats { scope } => {
            let s = db::stats(store.connection(), scope.as_deref())?;
            output::line(serde_json::to_string_pretty(&s)?);
        }
    }
    Ok(())
}

fn line(u: &MemoryUnit) -> String {
    let pin = if u.pinned { " [pinned]" } else { "" };
    let status = match u.status {
        Status::Active => "",
        Status::Superseded => " [superseded]",
        Status::Archived => " [forgotten]",
    };
    let text: String = u.content.chars().take(100).collect();
    format!(
        "{}  {:<22} {}{pin}{status}  {text}",
        u.id,
        u.kind.as_str(),
        u.scope
    )
}
