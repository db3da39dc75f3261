//! `metaclaw skills list | show | search | log`: read the library on disk and the database,
//! so they work whether or not MetaClaw is running. Import, export and the quarantine are in
//! `exchange`; proposals and history in `review`.

mod exchange;
mod review;
mod team;

use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_skills::retrieval::{RetrievalConfig, Retriever};
use metaclaw_skills::{Library, install_builtins};
use metaclaw_store::Store;
use serde_json::json;

use crate::cli::SkillsCommand;
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn run(paths: &Paths, command: SkillsCommand) -> Outcome {
    if let SkillsCommand::Log { n, full, json } = command {
        return log(paths, n, full, json);
    }
    let config = Config::load(paths)?.config;
    let dir = config.skills_dir(paths);
    match &command {
        SkillsCommand::Import { path, json } => {
            install_builtins(&dir)?;
            return exchange::import_from(&dir, path, *json);
        }
        SkillsCommand::Quarantine { json } => return exchange::list_quarantine(&dir, *json),
        SkillsCommand::Release { name } => return exchange::release(&dir, name),
        SkillsCommand::Discard { name } => return exchange::discard(&dir, name),
        SkillsCommand::Delete { name } => return team::delete(&dir, name),
        SkillsCommand::Proposals { json } => return review::list(&dir, *json),
        SkillsCommand::Approve { name, file } => {
            return review::approve(&dir, name, file.as_deref());
        }
        SkillsCommand::Reject { name } => return review::reject(&dir, name),
        SkillsCommand::History { name, json } => {
            return review::versions(paths, &dir, name, *json);
        }
        SkillsCommand::Rollback { name, to } => return review::rollback(&dir, name, *to),
        SkillsCommand::Sync { json } => {
            install_builtins(&dir)?;
            return team::sync_now(&config, paths, &dir, *json);
        }
        _ => {}
    }
    // First use fills an empty library with the built-in bank (never over the user's edits).
    install_builtins(&dir)?;
    let library = Library::load(std::slice::from_ref(&dir));
    for e in &library.errors {
        output::line(format!("skipped: {e}"));
    }
    match command {
        SkillsCommand::List { json } => list(&library, json),
        SkillsCommand::Show { name } => show(&library, &name),
        SkillsCommand::Search { query, limit } => {
            let retrieval = RetrievalConfig {
                top_k: config.skills.top_k as usize,
                task_specific_top_k: config.skills.task_specific_top_k as usize,
                ..RetrievalConfig::default()
            };
            search(&library, retrieval, &query, limit)
        }
        SkillsCommand::Export {
            dir: out,
            learned_only,
        } => exchange::export_to(paths, &library, &out, learned_only),
        SkillsCommand::Log { .. }
        | SkillsCommand::Import { .. }
        | SkillsCommand::Quarantine { .. }
        | SkillsCommand::Release { .. }
        | SkillsCommand::Discard { .. }
        | SkillsCommand::Delete { .. }
        | SkillsCommand::Proposals { .. }
        | SkillsCommand::Approve { .. }
        | SkillsCommand::Reject { .. }
        | SkillsCommand::History { .. }
        | SkillsCommand::Rollback { .. }
        | SkillsCommand::Sync { .. } => Ok(()),
    }
}

fn list(library: &Library, as_json: bool) -> Outcome {
    if as_json {
        let skills: Vec<_> = library
            .skills
            .iter()
            .map(|s| {
                json!({"name": s.name, "description": s.description, "category": s.category,
                       "tags": s.tags, "source": s.source, "always": s.always, "disabled": s.disabled})
            })
            .collect();
        output::line(json!({"skills": skills}));
        return Ok(());
    }
    for s in &library.skills {
        let flags = match (s.disabled, s.always) {
            (true, _) => " [disabled]",
            (false, true) => " [always]",
            _ => "",
        };
        let source = s.source.word();
        output::line(format!("{:<34} {:<16} {source}{flags}", s.name, s.category));
    }
    output::line(format!("{} skills", library.len()));
    Ok(())
}

fn show(library: &Library, name: &str) -> Outcome {
    let skill = library
        .get(name)
        .ok_or_else(|| Failure::error(format!("no skill named `{name}`")))?;
    output::line(metaclaw_skills::render_skill(skill)?);
    Ok(())
}

fn search(library: &Library, config: RetrievalConfig, query: &str, limit: usize) -> Outcome {
    let skills: Vec<_> = library.enabled().cloned().collect();
    let retriever = Retriever::new(&skills, config);
    let injected: Vec<String> = retriever
        .retrieve(query)
        .into_iter()
        .map(|h| h.name)
        .collect();
    let ranked = retriever.rank(query);
    if ranked.is_empty() {
        output::line("no skill matches; nothing would be injected");
        return Ok(());
    }
    for hit in ranked.iter().take(limit) {
        let mark = if injected.contains(&hit.name) {
            "*"
        } else {
            " "
        };
        output::line(format!(
            "{mark} {:>6.3}  {:<34} matched: {}",
            hit.score,
            hit.name,
            hit.matched_terms.join(", ")
        ));
    }
    if injected.is_empty() {
        output::line("nothing would be injected (no score passes the thresholds)");
    } else {
        output::line("* = would be injected");
    }
    Ok(())
}

/// Reads the evolution log from the database (read-only; WAL lets it run beside the engine).
fn log(paths: &Paths, n: usize, full: bool, as_json: bool) -> Outcome {
    if !paths.db.exists() {
        output::line("no evolutions yet (no database)");
        return Ok(());
    }
    let store = Store::open_read_only(&paths.db)?;
    let events = store.skill_events(n)?;
    let counts = store.skill_event_counts()?;
    if as_json {
        output::line(json!({"events": events, "counts": counts}));
        return Ok(());
    }
    if events.is_empty() {
        output::line("no evolutions yet");
        return Ok(());
    }
    for e in events.iter().rev() {
        let when = output::local_time(e.at_ms);
        let sessions = e.session_ids.join(", ");
        output::line(format!(
            "{when}  {:<13} {:<8} generation {}  sessions: {sessions}",
            e.trigger, e.outcome, e.generation
        ));
        for name in &e.added {
            output::line(format!("    + {name}"));
        }
        for name in &e.improved {
            output::line(format!("    ~ {name}"));
        }
        if let Some(err) = &e.error {
            output::line(format!("    ! {err}"));
        }
        if full {
            for r in &e.rejected {
                output::line(format!("    - {}: {}", r.name, r.reason));
            }
        } else if !e.rejected.is_empty() {
            output::line(format!(
                "    - {} rejected (--full shows why)",
                e.rejected.len()
            ));
        }
    }
    output::line(format!(
        "{} evolutions: {} skills learned, {} improved, {} failed",
        counts.events, counts.skills_added, counts.skills_improved, counts.failed
    ));
    Ok(())
}
