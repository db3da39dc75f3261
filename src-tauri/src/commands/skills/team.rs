//! `metaclaw skills sync | delete`: the team library (`skills.sync.remote`).

use std::path::Path;

use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::skills::team_sync;
use metaclaw_skills::parse::is_slug;
use metaclaw_skills::team::{record_deletion, sync};
use serde_json::json;

use crate::exit::{Failure, Outcome};
use crate::output;

pub fn sync_now(config: &Config, paths: &Paths, dir: &Path, as_json: bool) -> Outcome {
    let team = team_sync::team(config, paths).ok_or_else(|| {
        Failure::usage(
            "no team library: set one with `metaclaw config set skills.sync.remote URL` \
             (any git URL your git reaches)",
        )
    })?;
    let report = sync(dir, &team).map_err(Failure::error)?;
    if as_json {
        output::line(json!(report));
    } else {
        let list = |names: &[String]| {
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        };
        output::line(format!("sent: {}", list(&report.sent)));
        output::line(format!("received: {}", list(&report.received)));
        if !report.deleted.is_empty() {
            output::line(format!("deleted: {}", report.deleted.join(", ")));
        }
        for (name, reasons) in &report.quarantined {
            output::line(format!("quarantined {name}:"));
            for r in reasons {
                output::line(format!("    {r}"));
            }
        }
        for c in &report.conflicts {
            output::line(format!("two versions kept — {c}"));
        }
    }
    match &report.waiting {
        Some(why) => Err(Failure::error(format!(
            "{why}; the changes wait for the next sync"
        ))),
        None => Ok(()),
    }
}

pub fn delete(dir: &Path, name: &str) -> Outcome {
    if !is_slug(name) || !dir.join(name).join("SKILL.md").is_file() {
        return Err(Failure::error(format!(
            "no skill named `{name}` in {}",
            dir.display()
        )));
    }
    // Kept in the history, so a deletion can be rolled back like any other change.
    metaclaw_skills::history::keep(dir, name, "deleted")?;
    let folder = dir.join(name);
    std::fs::remove_dir_all(&folder)
        .map_err(|e| Failure::error(format!("cannot delete {}: {e}", folder.display())))?;
    record_deletion(dir, name).map_err(Failure::error)?;
    output::line(format!("deleted {name}"));
    Ok(())
}
