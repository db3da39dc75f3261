//! Connecting agents to this MetaClaw: the claws driver given MetaClaw's own address, proxy
//! key and model. The CLI (`setup`, `agent …`, `uninstall`), the admin API and `start` all
//! come through here, so they agree on where agents point and where backups live.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use metaclaw_claws::{
    Adapter, ClawError, Connected, Endpoint, Preview, Protocol, Status, Target, Verified,
    VerifyError, adapters, driver,
};

/// What connect and disconnect report, for callers (the CLI) that do not depend on the
/// claws crate themselves.
pub use metaclaw_claws::driver::{Disconnected, Restart, Reverted};
pub use metaclaw_claws::env::Env;
pub use metaclaw_claws::target::{Mode, PluginHost};

use crate::config::Config;
use crate::paths::Paths;
use crate::secrets::{PROXY_KEY, SecretError, SecretStore, ensure_proxy_key};

/// How long a verify request may take; the proxy answers from the upstream.
pub const VERIFY_TIMEOUT: Duration = Duration::from_secs(60);

/// What [`target`] advertises when `context_window` is 0 (derive): the agents' own default
/// for hosted models, so they do not trim prompts the upstream would accept.
const DEFAULT_CONTEXT_WINDOW: u32 = 200_000;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Claw(#[from] ClawError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error("{agent} is not connected to MetaClaw: run `metaclaw agent connect {agent}` first")]
    NotConnected { agent: String },
    /// The verify errors name the agent themselves.
    #[error(transparent)]
    Verify(VerifyError),
    #[error("cannot tell where your home directory is ($HOME is not set)")]
    NoHome,
    #[error("agent task failed: {0}")]
    Task(String),
    #[error("cannot tell where the metaclaw binary is, for the agent's hooks to run it: {0}")]
    NoBinary(std::io::Error),
}

/// `$METACLAW_HOME/agent-backup`: one directory per agent MetaClaw connected.
pub fn backup_root(paths: &Paths) -> PathBuf {
    paths.home.join("agent-backup")
}

/// This machine: `$HOME`, `$PATH`, real processes for restarts.
pub fn system_env() -> Result<Env, AgentError> {
    Env::system().ok_or(AgentError::NoHome)
}

/// The adapter called `name`, or an error listing the names there are.
pub fn adapter(name: &str) -> Result<Box<dyn Adapter>, AgentError> {
    adapters::by_name(name).ok_or_else(|| ClawError::UnknownAgent(name.to_owned()).into())
}

/// How `name` reaches MetaClaw by default (proxy or plugin).
pub fn mode(name: &str) -> Result<Mode, AgentError> {
    Ok(adapter(name)?.mode())
}

/// Whether `name` can run MetaClaw as its plugin (`agent connect NAME --plugin`).
pub fn has_plugin(name: &str) -> bool {
    adapters::plugin_of(name).is_some()
}

/// The adapter `name` is connected with now: the way its last connect recorded in the
/// backup (so a start reconnects a plugin as a plugin even if its entries were removed);
/// for a backup older than plugins, its plugin when the config holds the plugin's entries;
/// else its default.
fn in_use(paths: &Paths, env: &Env, name: &str) -> Result<Box<dyn Adapter>, AgentError> {
    let default = adapter(name)?;
    if default.mode() == Mode::Proxy
        && let Some(plugin) = adapters::plugin_of(name)
    {
        let root = backup_root(paths);
        let recorded = metaclaw_claws::backup::Backup::load(&root, name)
            .ok()
            .flatten()
            .and_then(|b| b.manifest.mode);
        let plugged = match recorded {
            Some(mode) => mode == Mode::Plugin,
            None => driver::status(plugin.as_ref(), env, &root).connected,
        };
        if plugged {
            return Ok(plugin);
        }
    }
    Ok(default)
}

/// The adapter connecting `name` with `target` uses: its plugin when `target` carries the
/// plugin's host and it has one.
fn wanted(name: &str, target: &Target) -> Result<Box<dyn Adapter>, AgentError> {
    match (&target.plugin, adapters::plugin_of(name)) {
        (Some(_), Some(plugin)) => Ok(plugin),
        _ => adapter(name),
    }
}

/// Every adapter's name, in the order setup offers them (`none` last).
pub fn names() -> Vec<&'static str> {
    adapters::all().iter().map(|a| a.name()).collect()
}

/// The `metaclaw` command plugin-mode agents run: this binary (the AppImage rather than its
/// temporary mount), with `METACLAW_HOME` when `paths` is not the default home.
pub fn plugin_host(paths: &Paths) -> Result<PluginHost, AgentError> {
    let program = match std::env::var_os("APPIMAGE").filter(|p| !p.is_empty()) {
        Some(image) => PathBuf::from(image),
        None => std::env::current_exe().map_err(AgentError::NoBinary)?,
    };
    Ok(PluginHost {
        program,
        home: (!paths.is_default_home()).then(|| paths.home.clone()),
        metaclaw_home: paths.home.clone(),
    })
}

/// [`target`], carrying this binary and home for the agent's plugin when `plugin`: what
/// connecting `plugin`-wise takes (the CLI, setup and the admin API alike).
pub fn target_for(
    paths: &Paths,
    config: &Config,
    store: &SecretStore,
    plugin: bool,
) -> Result<Target, AgentError> {
    let mut target = target(config, store)?;
    if plugin {
        target.plugin = Some(plugin_host(paths)?);
    }
    Ok(target)
}

/// Where agents should send requests: the proxy's address as a client reaches it, the proxy
/// key (created now if there is none yet), the served model id. Blocking: reads the keychain.
pub fn target(config: &Config, store: &SecretStore) -> Result<Target, AgentError> {
    let key = ensure_proxy_key(store)?;
    let model = match config.llm.model_id.trim() {
        "" => "metaclaw-model",
        m => m,
    };
    let host = client_host(&config.proxy.host);
    let port = config.proxy.port;
    let context_window = match u32::try_from(config.context_window) {
        Ok(0) => DEFAULT_CONTEXT_WINDOW,
        Ok(n) => n,
        Err(_) => u32::MAX,
    };
    Ok(Target {
        openai_base: format!("http://{host}:{port}/v1"),
        anthropic_base: format!("http://{host}:{port}"),
        context_window,
        prefer: match config.llm.api {
            crate::config::LlmApi::Anthropic => Protocol::Anthropic,
            crate::config::LlmApi::Openai => Protocol::OpenAi,
        },
        ..Target::local(port, key.expose(), model)
    })
}

/// The address a local client uses for `proxy.host`: a wildcard bind is reached on loopback.
fn client_host(host: &str) -> String {
    match host.trim().parse::<IpAddr>() {
        Ok(ip) if ip.is_unspecified() => "127.0.0.1".into(),
        Ok(IpAddr::V6(v6)) => format!("[{v6}]"),
        Ok(IpAddr::V4(v4)) => v4.to_string(),
        Err(_) => host.trim().to_owned(),
    }
}

/// Every agent's status (installed, connected, where it points; keys masked).
pub fn statuses(paths: &Paths, env: &Env) -> Vec<Status> {
    let root = backup_root(paths);
    adapters::all()
        .iter()
        .map(|a| match in_use(paths, env, a.name()) {
            Ok(used) => driver::status(used.as_ref(), env, &root),
            Err(_) => driver::status(a.as_ref(), env, &root),
        })
        .collect()
}

/// One agent's status.
pub fn status(paths: &Paths, env: &Env, name: &str) -> Result<Status, AgentError> {
    Ok(driver::status(
        in_use(paths, env, name)?.as_ref(),
        env,
        &backup_root(paths),
    ))
}

/// What connecting `name` would change, writing nothing.
pub fn preview(env: &Env, target: &Target, name: &str) -> Result<Preview, AgentError> {
    Ok(driver::preview(
        wanted(name, target)?.as_ref(),
        env,
        target,
    )?)
}

/// Points `name` at MetaClaw (backing its files up the first time) and restarts it when
/// something changed: as its plugin when `target` carries the plugin's host and the agent
/// has one, else through the proxy. An agent connected the other way is first given its
/// files back, so it never runs through both.
pub fn connect(
    paths: &Paths,
    env: &Env,
    target: &Target,
    name: &str,
) -> Result<Connected, AgentError> {
    let wanted = wanted(name, target)?;
    let current = in_use(paths, env, name)?;
    let root = backup_root(paths);
    if current.mode() != wanted.mode() && driver::status(current.as_ref(), env, &root).backed_up {
        driver::disconnect(current.as_ref(), env, &root)?;
    }
    Ok(driver::connect(wanted.as_ref(), env, target, &root)?)
}

/// Restores `name`'s files as they were before MetaClaw.
pub fn disconnect(paths: &Paths, env: &Env, name: &str) -> Result<Disconnected, AgentError> {
    Ok(driver::disconnect(
        in_use(paths, env, name)?.as_ref(),
        env,
        &backup_root(paths),
    )?)
}

/// Every agent MetaClaw connected and has not disconnected yet (a backup exists).
pub fn connected_names(paths: &Paths, env: &Env) -> Vec<String> {
    statuses(paths, env)
        .into_iter()
        .filter(|s| s.backed_up)
        .map(|s| s.agent)
        .collect()
}

/// Where `name`'s config points, key included: what [`verify`] sends. Blocking (reads the
/// file, maybe the keychain). An agent whose key lives outside its file (NemoClaw keeps it
/// in OpenShell, where its notes have the user put the proxy key) is checked with the
/// proxy key.
pub fn endpoint(env: &Env, store: &SecretStore, name: &str) -> Result<Endpoint, AgentError> {
    let adapter = adapter(name)?;
    let mut endpoint =
        driver::endpoint(adapter.as_ref(), env)?.ok_or_else(|| AgentError::NotConnected {
            agent: name.to_owned(),
        })?;
    if endpoint.api_key.is_empty()
        && let Some(key) = store.get(PROXY_KEY)?
    {
        endpoint.api_key = key.expose().to_owned();
    }
    Ok(endpoint)
}

/// Sends the request `name`'s own config would make (see [`endpoint`]), to prove the
/// agent reaches MetaClaw.
pub async fn verify(
    name: &str,
    endpoint: &Endpoint,
    timeout: Duration,
) -> Result<Verified, AgentError> {
    metaclaw_claws::verify::verify_agent(name, endpoint, timeout)
        .await
        .map_err(AgentError::Verify)
}

/// At start: keep the agents MetaClaw connected pointed at this run's address and key (a
/// changed port or model would otherwise strand them), and connect the agent the config
/// names (`claw_type`) when it is installed. Never fails the start: problems are logged.
pub fn reconnect_on_start(paths: &Paths, config: &Config, store: &SecretStore) {
    let Ok(env) = system_env() else {
        tracing::warn!("agents not checked: $HOME is not set");
        return;
    };
    let mut names = connected_names(paths, &env);
    if let Some(chosen) = config.chosen_agent() {
        let name = chosen.name();
        let installed = status(paths, &env, name).is_ok_and(|s| s.installed);
        if !installed && !names.iter().any(|n| n == name) {
            tracing::info!(
                agent = name,
                "claw_type names {name}, which is not installed here: not connected"
            );
        } else if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    if names.is_empty() {
        return;
    }
    let mut target = match target(config, store) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!("agents not connected: {e}");
            return;
        }
    };
    // A plugin's hooks keep running this binary, wherever it moved to; an agent connected
    // through the proxy stays so.
    let host = match plugin_host(paths) {
        Ok(host) => Some(host),
        Err(e) => {
            tracing::warn!("plugin agents not reconnected: {e}");
            None
        }
    };
    for name in names {
        let plugin = in_use(paths, &env, &name).is_ok_and(|a| a.mode() == Mode::Plugin);
        target.plugin = if plugin { host.clone() } else { None };
        if plugin && target.plugin.is_none() {
            continue;
        }
        match connect(paths, &env, &target, &name) {
            Ok(c) if c.changed => {
                tracing::info!(agent = %name, "pointed {name} at MetaClaw");
                for w in &c.warnings {
                    tracing::warn!(agent = %name, "{w}");
                }
            }
            Ok(_) => tracing::debug!(agent = %name, "{name} already points at MetaClaw"),
            Err(e) => tracing::warn!(agent = %name, "cannot connect {name}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::client_host;

    #[test]
    fn wildcard_binds_are_reached_on_loopback() {
        assert_eq!(client_host("0.0.0.0"), "127.0.0.1");
        assert_eq!(client_host("::"), "127.0.0.1");
        assert_eq!(client_host("127.0.0.1"), "127.0.0.1");
        assert_eq!(client_host("::1"), "[::1]");
        assert_eq!(client_host("192.168.1.4"), "192.168.1.4");
        assert_eq!(client_host("localhost"), "localhost");
    }
}
