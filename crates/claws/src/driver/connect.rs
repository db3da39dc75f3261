//! Pointing an agent at MetaClaw: what would change (preview) and doing it (connect),
//! backing the original up first and restarting the agent when the config changed.

use std::fs;
use std::path::Path;

use super::plan::{Plan, plans, write_config};
use super::restart::restart;
use super::types::{Connected, Options, Preview, Restart};
use crate::adapter::Adapter;
use crate::backup::{self, Backup};
use crate::env::Env;
use crate::error::ClawError;
use crate::packages;
use crate::target::Target;

/// What connecting would change, writing nothing.
pub fn preview(adapter: &dyn Adapter, env: &Env, target: &Target) -> Result<Preview, ClawError> {
    preview_with(&Options::default(), adapter, env, target)
}

pub fn preview_with(
    opts: &Options,
    adapter: &dyn Adapter,
    env: &Env,
    target: &Target,
) -> Result<Preview, ClawError> {
    let Some(plans) = plans(opts, adapter, env, target)? else {
        return Ok(Preview {
            agent: adapter.name().to_owned(),
            file: None,
            creates: false,
            already_connected: true,
            changes: Vec::new(),
            restart_command: None,
            notes: adapter.notes(),
        });
    };
    let already = plans.iter().all(Plan::unchanged);
    let creates = plans.first().is_some_and(|p| p.current.is_none());
    let file = plans.first().map(|p| p.path.clone());
    Ok(Preview {
        agent: adapter.name().to_owned(),
        file,
        creates,
        already_connected: already,
        changes: plans.into_iter().flat_map(|p| p.changes).collect(),
        restart_command: if already {
            None
        } else {
            adapter.restart_command(env)
        },
        notes: adapter.notes(),
    })
}

/// Points the agent at `target`: backs the original up (first time only), writes the
/// config atomically, restarts the agent if the file changed.
pub fn connect(
    adapter: &dyn Adapter,
    env: &Env,
    target: &Target,
    backup_root: &Path,
) -> Result<Connected, ClawError> {
    connect_with(&Options::default(), adapter, env, target, backup_root)
}

pub fn connect_with(
    opts: &Options,
    adapter: &dyn Adapter,
    env: &Env,
    target: &Target,
    backup_root: &Path,
) -> Result<Connected, ClawError> {
    let agent = adapter.name().to_owned();
    // A corrupt manifest stops here, before anything is written.
    let existing = Backup::load(backup_root, &agent)?;
    let Some(plans) = plans(opts, adapter, env, target)? else {
        return Ok(Connected {
            agent,
            file: None,
            changed: false,
            created: false,
            changes: Vec::new(),
            backup: None,
            restart: Restart::NotNeeded,
            warnings: Vec::new(),
            notes: adapter.notes(),
        });
    };
    // The plugin's files first: the config must never point at a folder not written yet, and
    // an unchanged config still gets an upgraded MetaClaw's plugin.
    let mut notes = adapter.notes();
    if let (Some(package), Some(host)) = (adapter.package(), &target.plugin) {
        packages::install(&host.metaclaw_home, package)?;
        if let Some((at, sub)) = adapter.package_link(env)
            && !packages::link(&host.metaclaw_home, package, sub, &at)?
        {
            notes.push(format!(
                "{} is not MetaClaw's link and was left as it is: the plugin {agent} loads is the one there",
                at.display()
            ));
        }
    }
    let file = plans.first().map(|p| p.path.clone());
    if plans.iter().all(Plan::unchanged) {
        return Ok(Connected {
            agent,
            file,
            changed: false,
            created: false,
            changes: Vec::new(),
            backup: existing.map(|b| b.dir().to_owned()),
            restart: Restart::NotNeeded,
            warnings: Vec::new(),
            notes: notes.clone(),
        });
    }
    let created = plans
        .first()
        .is_some_and(|p| p.current.is_none() && !p.unchanged());
    let plans: Vec<Plan> = plans.into_iter().filter(|p| !p.unchanged()).collect();

    let previous = existing.clone();
    let mut b = existing.unwrap_or_else(|| Backup::new(backup_root, &agent));
    for plan in &plans {
        let keys: Vec<Vec<String>> = plan.edits.iter().map(|e| e.path.clone()).collect();
        b.note_write(
            &plan.path,
            plan.current.as_deref().map(|c| (c, plan.mode)),
            plan.rendered.as_bytes(),
            &keys,
            target.base(adapter.protocol()),
        )?;
    }
    b.manifest.mode = Some(adapter.mode());
    // The backup is on disk before the config changes, so a crash in between leaves
    // something to restore from.
    b.save()?;

    for (i, plan) in plans.iter().enumerate() {
        if let Err(e) = write_config(plan) {
            // Put back the files already written, then undo the record of the writes.
            for done in &plans[..i] {
                let _ = match &done.current {
                    Some(bytes) => {
                        backup::write_atomic(&done.real, bytes, done.mode.unwrap_or(0o600))
                    }
                    None => fs::remove_file(&done.real).map_err(|e| ClawError::io(&done.real, e)),
                };
            }
            let _ = match previous {
                Some(p) => p.save(),
                None => b.clone().remove(),
            };
            return Err(e);
        }
    }

    let restart = restart(opts, adapter, env, &[&target.api_key]);
    Ok(Connected {
        agent,
        file,
        changed: true,
        created,
        changes: plans.into_iter().flat_map(|p| p.changes).collect(),
        backup: Some(b.dir().to_owned()),
        warnings: restart.warning().into_iter().collect(),
        restart,
        notes,
    })
}
