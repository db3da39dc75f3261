//! Reading where an agent's config points now (endpoint) and whether MetaClaw connected it
//! (status), writing nothing.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use super::plan::resolve;
use super::secrets::scrub;
use super::types::{EndpointView, Options, Status};
use crate::adapter::Adapter;
use crate::backup::Backup;
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Mode};

/// Where the agent's config points now, key included: what [`crate::verify::verify`]
/// needs to send the request the agent itself would. `None` when there is no config (or
/// the adapter cannot read it back). Never put the result in a log or response: use
/// [`EndpointView`] for that.
pub fn endpoint(adapter: &dyn Adapter, env: &Env) -> Result<Option<Endpoint>, ClawError> {
    endpoint_with(&Options::default(), adapter, env)
}

pub fn endpoint_with(
    opts: &Options,
    adapter: &dyn Adapter,
    env: &Env,
) -> Result<Option<Endpoint>, ClawError> {
    let agent = adapter.name();
    if let Some(resolved) = adapter.resolve_endpoint(env) {
        let ep = resolved.map_err(|detail| ClawError::CannotCheck {
            agent: agent.to_owned(),
            detail: scrub(&detail, &[]),
        })?;
        if let Some(why) = ep.as_ref().and_then(|e| adapter.unreadable_key(&e.api_key)) {
            return Err(ClawError::CannotCheck {
                agent: agent.to_owned(),
                detail: why,
            });
        }
        return Ok(ep);
    }
    let Some(path) = adapter.config_file(env)? else {
        return Ok(None);
    };
    let bytes = match fs::read(resolve(&path)) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ClawError::io(&path, e)),
    };
    let text = String::from_utf8(bytes).map_err(|_| ClawError::ConfigCorrupt {
        agent: agent.to_owned(),
        path: path.clone(),
        detail: "it is not UTF-8 text".into(),
    })?;
    let d = (opts.open)(adapter.format(), &text).map_err(|e| ClawError::ConfigCorrupt {
        agent: agent.to_owned(),
        path: path.clone(),
        detail: scrub(&e.0, &[]),
    })?;
    Ok(adapter.read_back(d.as_ref()))
}

/// Installed, connected, where the config points now. Never fails: what cannot be read
/// is reported in `problem`.
pub fn status(adapter: &dyn Adapter, env: &Env, backup_root: &Path) -> Status {
    status_with(&Options::default(), adapter, env, backup_root)
}

pub fn status_with(opts: &Options, adapter: &dyn Adapter, env: &Env, backup_root: &Path) -> Status {
    let mut problems = Vec::new();
    let binary = adapter.binary().and_then(|b| env.which(b));
    let config = match adapter.config_file(env) {
        Ok(c) => c,
        Err(e) => {
            problems.push(e.to_string());
            None
        }
    };
    let mut config_exists = false;
    let mut points_at = None;
    let mut plugged_in = false;
    let resolved = adapter.resolve_endpoint(env);
    if let Some(path) = &config {
        match fs::read(resolve(path)) {
            Ok(bytes) => {
                config_exists = true;
                let text = String::from_utf8_lossy(&bytes);
                match (opts.open)(adapter.format(), &text) {
                    Ok(d) if resolved.is_some() => plugged_in = adapter.plugged_in(d.as_ref()),
                    Ok(d) => {
                        plugged_in = adapter.plugged_in(d.as_ref());
                        points_at = adapter.read_back(d.as_ref());
                    }
                    Err(e) => problems.push(format!(
                        "{} cannot be read: {}",
                        path.display(),
                        scrub(&e.0, &[])
                    )),
                }
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }
    match resolved {
        Some(Ok(ep)) => points_at = ep,
        Some(Err(e)) => problems.push(scrub(&e, &[])),
        None => {}
    }
    let backup = match Backup::load(backup_root, adapter.name()) {
        Ok(b) => b,
        Err(e) => {
            problems.push(e.to_string());
            None
        }
    };
    let backed_up = backup.is_some() || Backup::dir_for(backup_root, adapter.name()).exists();
    let bases: Vec<&str> = backup
        .iter()
        .flat_map(|b| b.manifest.files.iter())
        .filter_map(|f| f.base.as_deref())
        .collect();
    let connected = match (adapter.mode(), &points_at) {
        (Mode::Plugin, _) => backup.is_some() && plugged_in,
        (Mode::Proxy, Some(ep)) => bases.iter().any(|b| same_base(b, &ep.base)),
        (Mode::Proxy, None) => backup.is_some(),
    };
    if backup.is_some() && !connected {
        problems.push(
            match adapter.mode() {
                Mode::Proxy => "the config no longer points at MetaClaw",
                Mode::Plugin => "the config no longer holds MetaClaw's plugin entries",
            }
            .to_owned()
                + " (changed since connecting); connect again or disconnect",
        );
    }
    Status {
        agent: adapter.name().to_owned(),
        mode: adapter.mode(),
        installed: binary.is_some() || config_exists,
        binary,
        config,
        config_exists,
        backed_up,
        connected,
        points_at: points_at.as_ref().map(EndpointView::from),
        problem: if problems.is_empty() {
            None
        } else {
            Some(problems.join("; "))
        },
        notes: adapter.notes(),
    }
}

/// Two base URLs of the same server: MetaClaw answers both protocols on one address, the
/// OpenAI one under `/v1`, so a config switched between them still points at MetaClaw.
fn same_base(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim_end_matches('/');
        s.strip_suffix("/v1").unwrap_or(s).to_owned()
    };
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn either_protocols_base_of_metaclaw_is_metaclaw() {
        assert!(same_base(
            "http://127.0.0.1:30000/v1",
            "http://127.0.0.1:30000"
        ));
        assert!(same_base(
            "http://127.0.0.1:30000/v1/",
            "http://127.0.0.1:30000/v1"
        ));
        assert!(!same_base(
            "http://127.0.0.1:30000",
            "http://127.0.0.1:30001/v1"
        ));
    }
}
