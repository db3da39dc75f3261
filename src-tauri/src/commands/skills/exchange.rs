//! `metaclaw skills import | export | quarantine | release | discard`: files in the skill
//! library, so they work whether or not MetaClaw is running (a running engine reloads the
//! library when it changes).

use std::path::Path;

use metaclaw_engine::paths::Paths;
use metaclaw_skills::import::{Item, Outcome as Imported, import};
use metaclaw_skills::{Library, export, quarantine};
use metaclaw_store::Store;
use serde_json::json;

use crate::exit::{Failure, Outcome};
use crate::output;

pub fn import_from(dir: &Path, source: &Path, as_json: bool) -> Outcome {
    let items = import(dir, source)?;
    let count = |f: fn(&Imported) -> bool| items.iter().filter(|i| f(&i.outcome)).count();
    let troubled = count(|o| matches!(o, Imported::Quarantined { .. } | Imported::Invalid { .. }));
    if as_json {
        output::line(json!({"items": items}));
    } else {
        for item in &items {
            print_item(item);
        }
        output::line(format!(
            "{} imported, {} updated, {} skipped, {} quarantined, {} invalid",
            count(|o| matches!(o, Imported::Imported)),
            count(|o| matches!(o, Imported::Updated)),
            count(|o| matches!(o, Imported::Skipped)),
            count(|o| matches!(o, Imported::Quarantined { .. })),
            count(|o| matches!(o, Imported::Invalid { .. })),
        ));
    }
    if troubled > 0 {
        return Err(Failure::error(format!(
            "{troubled} skill(s) not imported; `metaclaw skills quarantine` lists the held ones"
        )));
    }
    Ok(())
}

fn print_item(item: &Item) {
    for w in &item.warnings {
        output::line(format!("warning      {w}"));
    }
    match &item.outcome {
        Imported::Imported => output::line(format!("imported     {}", item.name)),
        Imported::Updated => output::line(format!("updated      {}", item.name)),
        Imported::Skipped => output::line(format!("skipped      {} (unchanged)", item.name)),
        Imported::Quarantined { reasons } => {
            output::line(format!("quarantined  {}", item.name));
            for r in reasons {
                output::line(format!("    {r}"));
            }
        }
        Imported::Invalid { error } => output::line(format!("invalid      {}: {error}", item.name)),
    }
}

pub fn export_to(paths: &Paths, library: &Library, out: &Path, learned_only: bool) -> Outcome {
    // The generation the library is at (it counts content changes); absent before the
    // first run.
    let generation = Store::open_read_only(&paths.db)
        .ok()
        .and_then(|s| metaclaw_engine::skills::generation::read(&s).ok());
    let written = export::export(library, out, learned_only, generation)?;
    let what = if learned_only {
        "learned skills"
    } else {
        "skills"
    };
    output::line(format!(
        "{} {what} written to {}",
        written.len(),
        out.display()
    ));
    Ok(())
}

pub fn list_quarantine(dir: &Path, as_json: bool) -> Outcome {
    let held = quarantine::list(dir);
    if as_json {
        output::line(json!({"quarantined": held}));
        return Ok(());
    }
    if held.is_empty() {
        output::line("no skill is quarantined");
        return Ok(());
    }
    for h in &held {
        output::line(format!(
            "{}  ({}, {})",
            h.name,
            h.origin,
            output::local_time(h.at_ms as i64)
        ));
        for r in &h.reasons {
            output::line(format!("    {r}"));
        }
    }
    output::line(format!(
        "{} quarantined; `metaclaw skills show` does not see them: read {}/<name>/SKILL.md, then `metaclaw skills release NAME` or `metaclaw skills discard NAME`",
        held.len(),
        dir.join(quarantine::DIR).display()
    ));
    Ok(())
}

pub fn release(dir: &Path, name: &str) -> Outcome {
    let file = quarantine::release(dir, name)?;
    output::line(format!(
        "released {name} into the library: {}",
        file.display()
    ));
    Ok(())
}

pub fn discard(dir: &Path, name: &str) -> Outcome {
    quarantine::delete(dir, name)?;
    output::line(format!("deleted the quarantined skill {name}"));
    Ok(())
}
