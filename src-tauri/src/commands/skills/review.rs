//! `metaclaw skills proposals | approve | reject | history | rollback`: learned skills
//! waiting for approval and each skill's earlier versions. They work on the library's files
//! (the running engine's watcher serves the result), so they work whether or not MetaClaw
//! is running.

use std::path::Path;

use metaclaw_engine::paths::Paths;
use metaclaw_skills::{history, proposals};
use metaclaw_store::Store;
use serde_json::json;

use crate::exit::{Failure, Outcome};
use crate::output;

pub fn list(dir: &Path, as_json: bool) -> Outcome {
    let waiting = proposals::list(dir);
    if as_json {
        output::line(json!({ "proposals": waiting }));
        return Ok(());
    }
    if waiting.is_empty() {
        output::line("no learned skill waits for approval");
        return Ok(());
    }
    for p in &waiting {
        let what = if p.improves { "improves" } else { "new" };
        output::line(format!(
            "{}  ({what}, from {}, {})",
            p.name,
            p.sessions.join(", "),
            output::local_time(i64::try_from(p.at_ms).unwrap_or(i64::MAX))
        ));
        output::line(format!("    {}", p.description));
    }
    output::line(format!(
        "{} waiting; read {}/<name>/SKILL.md, then `metaclaw skills approve NAME` or `metaclaw skills reject NAME`",
        waiting.len(),
        dir.join(proposals::DIR).display()
    ));
    Ok(())
}

/// Approves `name` as proposed, or with the whole `SKILL.md` of `file` (the reviewer's edit).
pub fn approve(dir: &Path, name: &str, file: Option<&Path>) -> Outcome {
    let edited = file
        .map(|f| {
            std::fs::read_to_string(f)
                .map_err(|e| Failure::error(format!("cannot read {}: {e}", f.display())))
        })
        .transpose()?;
    let written = proposals::approve(dir, name, edited.as_deref())?;
    output::line(format!("approved {name}: {}", written.display()));
    Ok(())
}

pub fn reject(dir: &Path, name: &str) -> Outcome {
    proposals::reject(dir, name)?;
    output::line(format!("rejected the proposed skill {name}"));
    Ok(())
}

/// The earlier versions, newest first, each with the main turns that carried the skill
/// while it was in the library (when the database can say).
pub fn versions(paths: &Paths, dir: &Path, name: &str, as_json: bool) -> Outcome {
    let versions = history::list(dir, name)?;
    let store = Store::open_read_only(&paths.db).ok();
    let carried = |from: u64, to: u64| {
        let ms = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        store
            .as_ref()
            .and_then(|s| s.carried_between(name, ms(from), ms(to)).ok())
            .map(|o| o.turns)
    };
    if as_json {
        let listed: Vec<_> = versions
            .iter()
            .map(|v| {
                let mut out = json!(v);
                out["turns"] = json!(carried(v.written_ms, v.replaced_ms));
                out
            })
            .collect();
        output::line(json!({ "name": name, "versions": listed }));
        return Ok(());
    }
    if versions.is_empty() {
        output::line(format!("{name} has no earlier version"));
        return Ok(());
    }
    for v in &versions {
        let turns = carried(v.written_ms, v.replaced_ms)
            .map_or_else(String::new, |n| format!(", carried by {n} turns"));
        output::line(format!(
            "{:>3}  replaced {} ({}){turns}",
            v.n,
            output::local_time(i64::try_from(v.replaced_ms).unwrap_or(i64::MAX)),
            v.reason
        ));
    }
    output::line(format!(
        "files: {}; `metaclaw skills rollback {name}` restores the newest (--to N another)",
        dir.join(history::DIR).join(name).display()
    ));
    Ok(())
}

pub fn rollback(dir: &Path, name: &str, to: Option<u32>) -> Outcome {
    let n = history::rollback(dir, name, to)?;
    output::line(format!(
        "restored version {n} of {name}; the replaced file is the newest version (roll back again to undo)"
    ));
    Ok(())
}
