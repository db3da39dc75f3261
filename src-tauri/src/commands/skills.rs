//! `metaclaw skills list | show | search`: read the library on disk, so they work whether or
//! not MetaClaw is running.

use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_skills::retrieval::{RetrievalConfig, Retriever};
use metaclaw_skills::{Library, install_builtins};
use serde_json::json;

use crate::cli::SkillsCommand;
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn run(paths: &Paths, command: SkillsCommand) -> Outcome {
    let config = Config::load(paths)?.config;
    let dir = config.skills_dir(paths);
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
        let source = format!("{:?}", s.source).to_lowercase();
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
