//! Step 8: point the chosen agents at MetaClaw and say what changed in each one's config
//! (keys masked by the driver) and whether the agent was restarted.

use metaclaw_engine::agents;
use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::secrets::SecretStore;
use metaclaw_engine::setup::{Change, Connected, Env, Restart};

use crate::exit::Failure;
use crate::output;

/// Connects each agent, through the proxy or, with `plugin`, as its plugin; returns the ones
/// now connected. One failing does not stop the others; the failure is reported at the end.
pub fn all(
    paths: &Paths,
    env: &Env,
    config: &Config,
    store: &SecretStore,
    names: &[String],
    plugin: bool,
) -> Result<Vec<String>, Failure> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let target = agents::target_for(paths, config, store, plugin).map_err(Failure::error)?;
    let mut connected = Vec::new();
    let mut failed = Vec::new();
    output::line("");
    for name in names {
        match agents::connect(paths, env, &target, name) {
            Ok(c) => {
                report(&c, plugin);
                connected.push(name.clone());
            }
            Err(e) => {
                output::error(format!("cannot connect {name}: {e}"));
                failed.push(name.as_str());
            }
        }
    }
    if !failed.is_empty() {
        return Err(Failure::error(format!(
            "the config is saved, but {} could not be connected; retry with `metaclaw agent connect NAME{}`",
            failed.join(", "),
            if plugin { " --plugin" } else { "" }
        )));
    }
    Ok(connected)
}

fn report(c: &Connected, plugin: bool) {
    let file = c
        .file
        .as_ref()
        .map(|f| format!(" ({})", f.display()))
        .unwrap_or_default();
    if !c.changed {
        output::line(format!("{}: already points at MetaClaw{file}", c.agent));
    } else {
        let created = if c.created { ", file created" } else { "" };
        let how = if plugin {
            "MetaClaw runs inside it as its plugin"
        } else {
            "pointed at MetaClaw"
        };
        output::line(format!("{}: {how}{file}{created}", c.agent));
        for change in &c.changes {
            output::line(format!("  {}", change_line(change)));
        }
        if let Some(backup) = &c.backup {
            output::line(format!("  original kept in {}", backup.display()));
        }
    }
    match &c.restart {
        Restart::Done { command } => output::line(format!("  restarted with `{command}`")),
        Restart::NoCommand => {
            output::line("  it loads the new config by itself or on its next start")
        }
        // The others are problems, listed with the warnings.
        _ => {}
    }
    for w in &c.warnings {
        output::line(format!("  warning: {w}"));
    }
    for n in &c.notes {
        output::line(format!("  note: {n}"));
    }
}

fn change_line(change: &Change) -> String {
    let show = |v: &Option<serde_json::Value>| match v {
        None => "(none)".to_owned(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    format!(
        "{}: {} → {}",
        change.key,
        show(&change.old),
        show(&change.new)
    )
}
