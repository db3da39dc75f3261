//! Putting an agent back as it was: every file MetaClaw touched is restored, deleted or has
//! only MetaClaw's keys reverted, decided for all files before any is written.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::plan::{resolve, strs};
use super::restart::restart;
use super::secrets::scrub;
use super::status::endpoint_with;
use super::types::{Disconnected, Options, Restart, Reverted, RevertedFile};
use crate::adapter::Adapter;
use crate::backup::{self, Backup, FileRecord};
use crate::env::Env;
use crate::error::ClawError;
use crate::packages;

/// Puts every file MetaClaw touched back as it was, then forgets the backup.
pub fn disconnect(
    adapter: &dyn Adapter,
    env: &Env,
    backup_root: &Path,
) -> Result<Disconnected, ClawError> {
    disconnect_with(&Options::default(), adapter, env, backup_root)
}

pub fn disconnect_with(
    opts: &Options,
    adapter: &dyn Adapter,
    env: &Env,
    backup_root: &Path,
) -> Result<Disconnected, ClawError> {
    let agent = adapter.name().to_owned();
    let Some(b) = Backup::load(backup_root, &agent)? else {
        return Err(ClawError::NotConnected {
            agent,
            path: Backup::dir_for(backup_root, adapter.name()),
        });
    };

    // The key MetaClaw wrote, read before it goes, so a failing restart cannot show it.
    let proxy_key = endpoint_with(opts, adapter, env)
        .ok()
        .flatten()
        .map(|e| e.api_key);

    // Decide every file before writing any, so a file that cannot be reverted leaves all
    // of them untouched.
    let mut steps = Vec::new();
    for rec in &b.manifest.files {
        steps.push(revert_step(opts, adapter, &b, rec)?);
    }

    let mut files = Vec::new();
    let mut changed = false;
    for step in steps {
        match &step.write {
            Write::Nothing => {}
            Write::Delete => match fs::remove_file(&step.real) {
                Ok(()) => changed = true,
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(ClawError::io(&step.real, e)),
            },
            Write::Bytes(bytes, mode) => {
                if let Some(parent) = step.real.parent() {
                    fs::create_dir_all(parent).map_err(|e| ClawError::io(parent, e))?;
                }
                backup::write_atomic(&step.real, bytes, *mode)?;
                changed = true;
            }
        }
        files.push(RevertedFile {
            path: step.path,
            action: step.action,
        });
    }

    // The link connect made where the agent looks for the plugin (a link of someone else's
    // is not MetaClaw's to remove).
    if let (Some(package), Some((at, _))) = (adapter.package(), adapter.package_link(env))
        && packages::unlink(package, &at)?
    {
        files.push(RevertedFile {
            path: at,
            action: Reverted::Deleted,
        });
    }

    let restart = if changed {
        restart(
            opts,
            adapter,
            env,
            &[proxy_key.as_deref().unwrap_or_default()],
        )
    } else {
        Restart::NotNeeded
    };
    b.remove()?;
    Ok(Disconnected {
        agent,
        files,
        changed,
        warnings: restart.warning().into_iter().collect(),
        restart,
    })
}

enum Write {
    Nothing,
    Delete,
    Bytes(Vec<u8>, u32),
}

struct Step {
    path: PathBuf,
    real: PathBuf,
    write: Write,
    action: Reverted,
}

/// How one recorded file goes back to its original.
fn revert_step(
    opts: &Options,
    adapter: &dyn Adapter,
    b: &Backup,
    rec: &FileRecord,
) -> Result<Step, ClawError> {
    let agent = adapter.name();
    let real = resolve(&rec.path);
    let original = b.original(rec)?;
    let (current, current_mode) = match fs::read(&real) {
        Ok(bytes) => {
            let mode = fs::metadata(&real).ok().and_then(|m| backup::mode_of(&m));
            (Some(bytes), mode)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => (None, None),
        Err(e) => return Err(ClawError::io(&real, e)),
    };
    let mode = rec.original_mode.or(current_mode).unwrap_or(0o600);
    let step = |write, action| Step {
        path: rec.path.clone(),
        real: real.clone(),
        write,
        action,
    };

    let Some(current) = current else {
        // Removed since: nothing of the user's is lost by putting the original back.
        return Ok(match original {
            Some(o) => step(Write::Bytes(o, mode), Reverted::Restored),
            None => step(Write::Nothing, Reverted::Unchanged),
        });
    };
    let hash = backup::sha256_hex(&current);
    if rec.original_sha256.as_deref() == Some(hash.as_str()) {
        return Ok(step(Write::Nothing, Reverted::Unchanged));
    }
    if hash == rec.written_sha256 {
        return Ok(match original {
            Some(o) => step(Write::Bytes(o, mode), Reverted::Restored),
            None => step(Write::Delete, Reverted::Deleted),
        });
    }

    // The user edited the file since: revert only MetaClaw's keys.
    let changed_since = |detail: String| ClawError::ChangedSince {
        agent: agent.to_owned(),
        path: rec.path.clone(),
        detail: scrub(&detail, &[]),
    };
    let text = String::from_utf8(current)
        .map_err(|_| changed_since("it is no longer UTF-8 text".into()))?;
    let mut doc = (opts.open)(adapter.format(), &text)
        .map_err(|e| changed_since(format!("it no longer parses ({})", e.0)))?;
    let original_doc = match &original {
        Some(o) => {
            let t = std::str::from_utf8(o)
                .map_err(|_| changed_since("the original is not UTF-8 text".into()))?;
            Some(
                (opts.open)(adapter.format(), t)
                    .map_err(|e| changed_since(format!("the original does not parse ({})", e.0)))?,
            )
        }
        None => None,
    };
    for key in &rec.keys {
        let p = strs(key);
        let result = match original_doc.as_ref().and_then(|d| d.get(&p)) {
            Some(v) => doc.set(&p, &v),
            None => doc.remove(&p).map(|_| ()),
        };
        result.map_err(|e| changed_since(format!("cannot restore `{}`: {e}", key.join("."))))?;
    }
    // Parents MetaClaw created for its keys go too, when empty and absent from the original.
    for key in &rec.keys {
        for n in (1..key.len()).rev() {
            let p = strs(&key[..n]);
            let in_original = original_doc.as_ref().is_some_and(|d| d.get(&p).is_some());
            let empty = matches!(doc.get(&p), Some(Value::Object(m)) if m.is_empty());
            if in_original || !empty {
                break;
            }
            doc.remove(&p).map_err(|e| {
                changed_since(format!("cannot remove `{}`: {e}", key[..n].join(".")))
            })?;
        }
    }
    let rendered = doc.render();
    // A file MetaClaw created that holds nothing once its keys are gone (the agent
    // rewrote it, CoPaw encrypting the key) goes, as if untouched.
    let bare: String = rendered.chars().filter(|c| !c.is_whitespace()).collect();
    if original.is_none() && (bare.is_empty() || bare == "{}") {
        return Ok(step(Write::Delete, Reverted::Deleted));
    }
    if rendered == text {
        return Ok(step(Write::Nothing, Reverted::Unchanged));
    }
    Ok(step(
        Write::Bytes(rendered.into_bytes(), current_mode.unwrap_or(mode)),
        Reverted::KeysReverted {
            keys: rec.keys.iter().map(|k| k.join(".")).collect(),
        },
    ))
}
