//! Planning a connect's file edits (what each file becomes, the changes shown with secrets
//! masked) and writing a planned file.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::secrets::{masked, scrub};
use super::types::{Change, Options};
use crate::adapter::{Adapter, Edit};
use crate::backup;
use crate::doc::Doc;
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Mode, Target};

/// The change `connect` would make to the agent's config.
pub(super) struct Plan {
    /// The adapter's path (what the manifest records).
    pub(super) path: PathBuf,
    /// Where bytes are written: the path with a symlink resolved, so a config kept in a
    /// dotfiles repository stays a link.
    pub(super) real: PathBuf,
    /// The current bytes; `None` when the file does not exist.
    pub(super) current: Option<Vec<u8>>,
    pub(super) mode: Option<u32>,
    pub(super) edits: Vec<Edit>,
    pub(super) rendered: String,
    pub(super) changes: Vec<Change>,
}

impl Plan {
    pub(super) fn unchanged(&self) -> bool {
        self.current.as_deref() == Some(self.rendered.as_bytes())
    }
}

/// Text a created file starts from: empty if the format's editor accepts it, else an empty
/// object (`{}` for JSON5 and YAML).
const SEEDS: [&str; 2] = ["", "{}\n"];

/// The change to the main config file, then to each companion file (see
/// [`Adapter::companion_files`]); `None` for an agent without a config file.
pub(super) fn plans(
    opts: &Options,
    adapter: &dyn Adapter,
    env: &Env,
    target: &Target,
) -> Result<Option<Vec<Plan>>, ClawError> {
    if adapter.mode() == Mode::Plugin && target.plugin.is_none() {
        return Err(ClawError::PluginOnly {
            agent: adapter.name().to_owned(),
        });
    }
    let Some(path) = adapter.config_file(env)? else {
        return Ok(None);
    };
    let creates = adapter.creates_config();
    let Some(main) = plan_file(opts, adapter, path, true, creates, target, &|d, t| {
        adapter.edits(d, t)
    })?
    else {
        return Ok(None);
    };
    let mut all = vec![main];
    for (path, creates) in adapter.companion_files(env)? {
        let edits = |d: &dyn Doc, t: &Target| adapter.companion_edits(&path, d, t);
        if let Some(mut p) = plan_file(opts, adapter, path.clone(), false, creates, target, &edits)?
        {
            for c in &mut p.changes {
                c.key = format!("{} {}", path.display(), c.key);
            }
            all.push(p);
        }
    }
    Ok(Some(all))
}

type EditsFn<'a> = dyn Fn(&dyn Doc, &Target) -> Result<Vec<Edit>, String> + 'a;

/// The change to one file; `None` when a companion (`main` false) is missing and not to be
/// created.
fn plan_file(
    opts: &Options,
    adapter: &dyn Adapter,
    path: PathBuf,
    main: bool,
    creates: bool,
    target: &Target,
    edits_of: &EditsFn<'_>,
) -> Result<Option<Plan>, ClawError> {
    let agent = adapter.name();
    let real = resolve(&path);
    let (current, mode) = match fs::read(&real) {
        Ok(bytes) => {
            let mode = fs::metadata(&real).ok().and_then(|m| backup::mode_of(&m));
            (Some(bytes), mode)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            if !creates {
                if !main {
                    return Ok(None);
                }
                return Err(ClawError::ConfigMissing {
                    agent: agent.to_owned(),
                    path,
                });
            }
            (None, None)
        }
        Err(e) => return Err(ClawError::io(&path, e)),
    };
    let secrets = [target.api_key.as_str()];

    let (edits, before, after) = match &current {
        Some(bytes) => {
            let text = std::str::from_utf8(bytes).map_err(|_| ClawError::ConfigCorrupt {
                agent: agent.to_owned(),
                path: path.clone(),
                detail: "it is not UTF-8 text".into(),
            })?;
            if text.trim().is_empty() {
                return Err(ClawError::ConfigEmpty {
                    agent: agent.to_owned(),
                    path,
                });
            }
            let before =
                (opts.open)(adapter.format(), text).map_err(|e| ClawError::ConfigCorrupt {
                    agent: agent.to_owned(),
                    path: path.clone(),
                    detail: scrub(&e.0, &secrets),
                })?;
            let mut after =
                (opts.open)(adapter.format(), text).map_err(|e| ClawError::ConfigCorrupt {
                    agent: agent.to_owned(),
                    path: path.clone(),
                    detail: scrub(&e.0, &secrets),
                })?;
            let edits = edits_of(before.as_ref(), target)
                .map_err(|d| unexpected(agent, &path, &d, &secrets))?;
            apply(after.as_mut(), &edits).map_err(|d| unexpected(agent, &path, &d, &secrets))?;
            (edits, before, after)
        }
        None => {
            let mut last = String::from("no starting text");
            let mut made = None;
            for seed in SEEDS {
                let attempt = (|| {
                    let before = (opts.open)(adapter.format(), seed).map_err(|e| e.0)?;
                    let mut after = (opts.open)(adapter.format(), seed).map_err(|e| e.0)?;
                    let edits = edits_of(before.as_ref(), target)?;
                    apply(after.as_mut(), &edits)?;
                    Ok::<_, String>((edits, before, after))
                })();
                match attempt {
                    Ok(m) => {
                        made = Some(m);
                        break;
                    }
                    Err(e) => last = e,
                }
            }
            made.ok_or_else(|| unexpected(agent, &path, &last, &secrets))?
        }
    };

    let mut changes = Vec::new();
    let mut seen: Vec<&[String]> = Vec::new();
    for e in &edits {
        if seen.contains(&e.path.as_slice()) {
            continue;
        }
        seen.push(&e.path);
        let p = strs(&e.path);
        let old = before.get(&p);
        let new = after.get(&p);
        if old != new {
            let last = e.path.last().map(String::as_str);
            changes.push(Change {
                key: e.path.join("."),
                old: old.map(|v| masked(last, &v, &secrets)),
                new: new.map(|v| masked(last, &v, &secrets)),
            });
        }
    }

    Ok(Some(Plan {
        path,
        real,
        current,
        mode,
        rendered: after.render(),
        edits,
        changes,
    }))
}

fn unexpected(agent: &str, path: &Path, detail: &str, secrets: &[&str]) -> ClawError {
    ClawError::Unexpected {
        agent: agent.to_owned(),
        path: path.to_owned(),
        detail: scrub(detail, secrets),
    }
}

pub(super) fn strs(path: &[String]) -> Vec<&str> {
    path.iter().map(String::as_str).collect()
}

fn apply(doc: &mut dyn Doc, edits: &[Edit]) -> Result<(), String> {
    for e in edits {
        let p = strs(&e.path);
        match &e.value {
            Some(v) => doc.set(&p, v),
            None => doc.remove(&p).map(|_| ()),
        }
        .map_err(|err| format!("cannot edit `{}`: {err}", e.path.join(".")))?;
    }
    Ok(())
}

pub(super) fn write_config(plan: &Plan) -> Result<(), ClawError> {
    if plan.current.is_none()
        && let Some(parent) = plan.real.parent()
        && !parent.as_os_str().is_empty()
        && !parent.exists()
    {
        fs::create_dir_all(parent).map_err(|e| ClawError::io(parent, e))?;
        // A new agent directory holds the proxy key: keep it private.
        backup::set_mode(parent, 0o700)?;
    }
    backup::write_atomic(
        &plan.real,
        plan.rendered.as_bytes(),
        plan.mode.unwrap_or(0o600),
    )
}

/// The path with a symlink followed (a dangling or unreadable link stays as given).
pub(super) fn resolve(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
        }
        _ => path.to_owned(),
    }
}
