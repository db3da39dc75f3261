//! `metaclaw agent connect | disconnect | status [NAME]`: the claws driver (through the
//! engine's `agents`, so the CLI, `start` and the admin API agree on where agents point and
//! where backups live), printed for a person. Keys are masked everywhere: the driver masks
//! its results, and nothing here prints a key it did not get masked.

use metaclaw_engine::agents::{self, Disconnected, Env, Mode, Restart, Reverted};
use metaclaw_engine::config::{self, Config, Overrides};
use metaclaw_engine::paths::Paths;
use metaclaw_engine::runfiles::RunInfo;
use metaclaw_engine::secrets::{BackendChoice, PROXY_KEY, SecretStore};
use serde_json::Value;

use crate::cli::AgentCommand;
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn run(paths: &Paths, command: AgentCommand) -> Outcome {
    match command {
        AgentCommand::Status { name, json } => status(paths, name.as_deref(), json),
        AgentCommand::Connect {
            name,
            dry_run,
            plugin,
        } => connect(paths, name.as_deref(), dry_run, plugin),
        AgentCommand::Disconnect { name } => disconnect(paths, name.as_deref()),
    }
}

/// `name` as an adapter name, or a usage error listing the names there are.
fn known(name: &str) -> Result<String, Failure> {
    let wanted = name.trim().to_ascii_lowercase();
    if agents::names().contains(&wanted.as_str()) {
        Ok(wanted)
    } else {
        Err(Failure::usage(format!(
            "unknown agent `{name}`: choose {}",
            agents::names().join(", ")
        )))
    }
}

fn system_env() -> Result<Env, Failure> {
    agents::system_env().map_err(Failure::error)
}

/// The agent `start` connects by itself (`claw_type`, when the config chose one); `None`
/// when the config cannot be read, so a broken config never blocks a status or a restore.
fn chosen_agent(paths: &Paths) -> Option<&'static str> {
    Config::load(paths)
        .ok()
        .and_then(|l| l.config.chosen_agent())
        .map(|c| c.name())
}

fn open_store(paths: &Paths, loaded: Option<&config::Loaded>) -> Result<SecretStore, Failure> {
    let store = SecretStore::open(paths)?;
    Ok(match loaded {
        Some(l) => store.with_legacy(l.legacy_secrets.clone()),
        None => store,
    })
}

/// The port of the MetaClaw running on this home, when one is.
fn running_port(paths: &Paths) -> Option<Option<u16>> {
    RunInfo::read(paths)
        .ok()
        .flatten()
        .filter(RunInfo::is_alive)
        .map(|i| i.port)
}

fn status(paths: &Paths, name: Option<&str>, as_json: bool) -> Outcome {
    let name = name.map(known).transpose()?;
    let env = system_env()?;
    let list = match &name {
        Some(n) => vec![agents::status(paths, &env, n).map_err(Failure::error)?],
        None => agents::statuses(paths, &env),
    };
    if as_json {
        let value = match (&name, list.first()) {
            (Some(_), Some(one)) => serde_json::to_value(one)?,
            _ => serde_json::to_value(&list)?,
        };
        output::line(serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    let chosen = chosen_agent(paths);
    let width = list.iter().map(|s| s.agent.len()).max().unwrap_or(0) + 12;
    for s in &list {
        // `none` has nothing to report unless asked about by name.
        if name.is_none() && s.agent == "none" {
            continue;
        }
        let label = if chosen == Some(s.agent.as_str()) {
            format!("{} (claw_type)", s.agent)
        } else {
            s.agent.clone()
        };
        let state = if s.connected && s.mode == Mode::Plugin {
            "connected (plugin)"
        } else if s.connected {
            "connected"
        } else if s.backed_up {
            "changed since connecting"
        } else if s.installed {
            "not connected"
        } else {
            "not installed"
        };
        output::line(format!("{label:<width$} {state}"));
        if !s.installed && !s.backed_up && name.is_none() {
            continue;
        }
        if let Some(config) = &s.config {
            output::line(format!(
                "    config:  {}{}",
                config.display(),
                if s.config_exists { "" } else { " (missing)" }
            ));
        }
        if let Some(binary) = &s.binary {
            output::line(format!("    binary:  {}", binary.display()));
        }
        if let Some(p) = &s.points_at {
            output::line(format!(
                "    points:  {} (model {}, key {})",
                p.base,
                p.model,
                if p.api_key.is_empty() {
                    "none"
                } else {
                    p.api_key.as_str()
                }
            ));
        }
        if let Some(problem) = &s.problem {
            output::line(format!("    problem: {problem}"));
        }
        for note in &s.notes {
            output::line(format!("    note:    {note}"));
        }
    }
    Ok(())
}

/// A changed value for a person: JSON as the driver masked it, `(unset)` when absent.
fn shown(v: Option<&Value>) -> String {
    match v {
        None => "(unset)".into(),
        Some(Value::String(s)) => format!("\"{s}\""),
        Some(v) => v.to_string(),
    }
}

/// Why connecting `name` this way is refused: a plugin-mode agent asked for without
/// `--plugin`, or `--plugin` for an agent that has no plugin.
fn mode_refusal(name: &str, plugin: bool) -> Result<Option<Failure>, Failure> {
    let mode = agents::mode(name).map_err(Failure::error)?;
    Ok(match (mode, plugin) {
        (Mode::Plugin, false) => Some(Failure::usage(format!(
            "{name} connects to MetaClaw in one of two ways:\n  \
             --plugin: `metaclaw agent connect {name} --plugin` adds MetaClaw's hooks to its settings, \
             so it keeps talking to its own provider with its own login (subscriptions included) while \
             MetaClaw adds its context to each prompt and learns from each turn;\n  \
             ANTHROPIC_BASE_URL: start it with ANTHROPIC_BASE_URL=http://127.0.0.1:<port> and \
             ANTHROPIC_API_KEY=<proxy key>, so its requests go through MetaClaw's proxy (API keys \
             only; nothing is edited)."
        ))),
        (Mode::Proxy, true) if !agents::has_plugin(name) => Some(Failure::usage(format!(
            "{name} has no plugin for MetaClaw (these have: {}): connect it with \
             `metaclaw agent connect {name}`, which points it at MetaClaw's proxy",
            agents::names()
                .into_iter()
                .filter(|n| agents::has_plugin(n))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        _ => None,
    })
}

fn connect(paths: &Paths, name: Option<&str>, dry_run: bool, plugin: bool) -> Outcome {
    let loaded = Config::load(paths)?;
    let name = match name {
        Some(n) => known(n)?,
        None => match loaded.config.claw_type.name() {
            "none" => {
                return Err(Failure::usage(format!(
                    "claw_type is `none` in {}: name the agent to connect (metaclaw agent connect NAME; NAME is one of {})",
                    paths.config.display(),
                    agents::names().join(", ")
                )));
            }
            n => n.to_owned(),
        },
    };
    if let Some(refusal) = mode_refusal(&name, plugin)? {
        return Err(refusal);
    }
    let mut config = loaded.config.clone();
    let running = running_port(paths);
    // Agents go where MetaClaw really listens: a run started with --port serves there, and
    // `start` itself points connected agents at the port it bound.
    if let Some(Some(port)) = running {
        config.apply(Overrides {
            port: Some(port),
            mode: None,
        });
    }
    let store = open_store(paths, Some(&loaded))?;
    let env = system_env()?;

    if dry_run {
        let host = if plugin {
            Some(agents::plugin_host(paths).map_err(Failure::error)?)
        } else {
            None
        };
        return preview(&config, &store, &env, &name, host);
    }

    let target = agents::target_for(paths, &config, &store, plugin).map_err(Failure::error)?;
    let c = agents::connect(paths, &env, &target, &name).map_err(Failure::error)?;
    match (&c.file, c.changed) {
        (None, _) => output::line(format!("{name} has no config file to edit.")),
        (Some(file), false) => output::line(format!(
            "{name} already points at MetaClaw: nothing changed in {}.",
            file.display()
        )),
        (Some(file), true) => {
            output::line(format!(
                "Connected {name}: {}{}",
                file.display(),
                if c.created { " (created)" } else { "" }
            ));
            for ch in &c.changes {
                output::line(format!(
                    "    {}: {} → {}",
                    ch.key,
                    shown(ch.old.as_ref()),
                    shown(ch.new.as_ref())
                ));
            }
        }
    }
    if let Some(b) = &c.backup {
        output::line(format!(
            "Backup of the original: {} (`metaclaw agent disconnect {name}` restores it)",
            b.display()
        ));
    }
    print_restart(&name, &c.restart);
    for w in &c.warnings {
        output::line(format!("warning: {w}"));
    }
    for n in &c.notes {
        output::line(format!("note: {n}"));
    }
    if c.file.is_none() {
        return Ok(());
    }
    if plugin {
        output::line(match running {
            Some(_) => format!(
                "MetaClaw is running: {name} sessions started from now on get its context and send it their turns."
            ),
            None => format!(
                "MetaClaw is not running: until it is (`metaclaw start`), {name} works as before, without its context."
            ),
        });
        return Ok(());
    }
    if running.is_none() {
        output::line(format!(
            "MetaClaw is not running, so the connection is not verified yet: once it runs (`metaclaw start`), `metaclaw agent connect {name}` verifies it."
        ));
        return Ok(());
    }
    verify(&env, &store, &name)
}

/// The preview, with a proxy key that exists only for it when there is none yet: a dry run
/// leaves neither the keychain nor MetaClaw's home touched.
fn preview(
    config: &Config,
    store: &SecretStore,
    env: &Env,
    name: &str,
    host: Option<agents::PluginHost>,
) -> Outcome {
    let has_key = store.get(PROXY_KEY)?.is_some();
    let mut target = if has_key {
        agents::target(config, store).map_err(Failure::error)?
    } else {
        let scratch = Scratch::new()?;
        let throwaway = SecretStore::new(&Paths::new(&scratch.0)?, BackendChoice::File);
        agents::target(config, &throwaway).map_err(Failure::error)?
    };
    let plugin = host.is_some();
    target.plugin = host;
    let p = agents::preview(env, &target, name).map_err(Failure::error)?;
    output::line("Dry run: nothing is written.");
    match &p.file {
        None => output::line(format!("{name} has no config file to edit.")),
        Some(file) if p.already_connected => output::line(format!(
            "{name} already points at MetaClaw: nothing would change in {}.",
            file.display()
        )),
        Some(file) => {
            output::line(format!(
                "{name}: {}{}",
                file.display(),
                if p.creates { " (would be created)" } else { "" }
            ));
            for ch in &p.changes {
                output::line(format!(
                    "    {}: {} → {}",
                    ch.key,
                    shown(ch.old.as_ref()),
                    shown(ch.new.as_ref())
                ));
            }
            if !has_key && !plugin {
                output::line("    (there is no proxy key yet: connecting creates one)");
            }
            match &p.restart_command {
                Some(cmd) => output::line(format!("Would restart {name}: `{}`", cmd.join(" "))),
                None => output::line(format!("{name} would not be restarted.")),
            }
        }
    }
    for n in &p.notes {
        output::line(format!("note: {n}"));
    }
    Ok(())
}

/// A private directory removed on drop; holds the throwaway store of a dry run.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, Failure> {
        let dir = std::env::temp_dir().join(format!(
            "metaclaw-dry-run-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ));
        std::fs::create_dir(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn verify(env: &Env, store: &SecretStore, name: &str) -> Outcome {
    let runtime = crate::admin_client::runtime()?;
    let result = agents::endpoint(env, store, name)
        .and_then(|ep| runtime.block_on(agents::verify(name, &ep, agents::VERIFY_TIMEOUT)));
    match result {
        Ok(v) => {
            output::line(format!(
                "Verified: {name}'s config reaches MetaClaw ({} answered {} in {} ms).",
                v.url, v.status, v.elapsed_ms
            ));
            Ok(())
        }
        Err(e) => Err(Failure::error(format!(
            "verify failed: {e}\n{name} stays connected; `metaclaw agent disconnect {name}` restores it"
        ))),
    }
}

/// Says how the agent was told to reload; problems come as warnings, printed by the caller.
fn print_restart(name: &str, restart: &Restart) {
    match restart {
        Restart::Done { command } => output::line(format!("Restarted {name}: `{command}`")),
        Restart::NoCommand => output::line(format!(
            "{name} has no restart command: it loads its config on its next start."
        )),
        _ => {}
    }
}

fn disconnect(paths: &Paths, name: Option<&str>) -> Outcome {
    let env = system_env()?;
    let names = match name {
        Some(n) => vec![known(n)?],
        None => agents::connected_names(paths, &env),
    };
    if names.is_empty() {
        output::line("No agent is connected to MetaClaw: nothing to restore.");
        return Ok(());
    }
    let chosen = chosen_agent(paths);
    let mut failed = Vec::new();
    for n in &names {
        let connected = agents::status(paths, &env, n)
            .map_err(Failure::error)?
            .backed_up;
        if !connected {
            output::line(format!(
                "{n} is not connected to MetaClaw (no backup): nothing to restore."
            ));
        } else {
            match agents::disconnect(paths, &env, n) {
                Ok(d) => print_disconnected(n, &d),
                Err(e) => {
                    failed.push(e.to_string());
                    continue;
                }
            }
        }
        if chosen == Some(n.as_str()) {
            forget_choice(paths, n)?;
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::error(failed.join("\n")))
    }
}

pub(crate) fn print_disconnected(name: &str, d: &Disconnected) {
    output::line(format!("Disconnected {name}:"));
    for f in &d.files {
        let path = f.path.display();
        output::line(match &f.action {
            Reverted::Restored => format!("    restored {path} (exactly as before MetaClaw)"),
            Reverted::Deleted => format!("    deleted {path} (MetaClaw had created it)"),
            Reverted::KeysReverted { keys } => format!(
                "    reverted {} in {path} (your later edits stay)",
                keys.join(", ")
            ),
            Reverted::Unchanged => format!("    {path} was already as before MetaClaw"),
        });
    }
    print_restart(name, &d.restart);
    for w in &d.warnings {
        output::line(format!("warning: {w}"));
    }
}

/// `claw_type: none`, so `start` does not connect the agent again.
pub(crate) fn forget_choice(paths: &Paths, name: &str) -> Outcome {
    let store = open_store(paths, None)?;
    config::set(paths, "claw_type", "none", &store)?;
    output::line(format!(
        "Set claw_type to none in {}, so `metaclaw start` does not connect {name} again (`metaclaw agent connect {name}` does).",
        paths.config.display()
    ));
    Ok(())
}
