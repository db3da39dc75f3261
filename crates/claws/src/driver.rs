//! The one path every adapter goes through: locate the config, open it in its format,
//! apply the adapter's edits, back the original up (first connect only), write atomically,
//! restart the agent when something changed — and undo all of it on disconnect.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::adapter::{Adapter, Edit};
use crate::backup::{self, Backup, FileRecord};
use crate::doc::{self, Doc, EditError, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

/// Opens a document; [`doc::open`] unless a caller brings its own format (tests).
pub type Opener = fn(Format, &str) -> Result<Box<dyn Doc>, EditError>;

/// How the driver runs; [`Options::default`] is what MetaClaw uses.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub open: Opener,
    /// A reload-style command (`… reload`, `… config apply`).
    pub command_timeout: Duration,
    /// A command that restarts the agent (its argv mentions `restart`); services can take
    /// a while to stop and come back.
    pub restart_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            open: doc::open,
            command_timeout: Duration::from_secs(15),
            restart_timeout: Duration::from_secs(90),
        }
    }
}

/// One key whose value changes, secrets masked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The key path, dotted (`models.providers.metaclaw`).
    pub key: String,
    pub old: Option<Value>,
    pub new: Option<Value>,
}

/// What `connect` would do, without doing it.
#[derive(Debug, Clone, Serialize)]
pub struct Preview {
    pub agent: String,
    /// `None` for an agent without a config file (`none`).
    pub file: Option<PathBuf>,
    /// The file does not exist and would be created.
    pub creates: bool,
    /// Nothing would change: the agent already points at the target.
    pub already_connected: bool,
    pub changes: Vec<Change>,
    pub restart_command: Option<Vec<String>>,
    pub notes: Vec<String>,
}

/// How the agent was (or was not) told to reload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Restart {
    /// Nothing changed, so nothing to reload.
    NotNeeded,
    /// The adapter has no restart command (the agent reloads by itself or on next start).
    NoCommand,
    /// The command's program is not on `PATH`.
    ProgramMissing {
        program: String,
    },
    Done {
        command: String,
    },
    Failed {
        command: String,
        code: Option<i32>,
        detail: String,
    },
    TimedOut {
        command: String,
        after_secs: u64,
    },
}

impl Restart {
    /// The restart's problem in words, for the result's warnings.
    pub fn warning(&self) -> Option<String> {
        match self {
            Restart::NotNeeded | Restart::NoCommand | Restart::Done { .. } => None,
            Restart::ProgramMissing { program } => Some(format!(
                "`{program}` is not on PATH, so the agent was not restarted: restart it yourself to load the new config"
            )),
            Restart::Failed {
                command,
                code,
                detail,
            } => Some(format!(
                "`{command}` failed ({}){}: restart the agent yourself to load the new config",
                code.map_or_else(|| "killed".to_owned(), |c| format!("exit {c}")),
                if detail.is_empty() {
                    String::new()
                } else {
                    format!(": {detail}")
                }
            )),
            Restart::TimedOut {
                command,
                after_secs,
            } => Some(format!(
                "`{command}` did not finish within {after_secs} s and was stopped: check the agent is running"
            )),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Connected {
    pub agent: String,
    pub file: Option<PathBuf>,
    /// Whether the file was written (false: already connected, nothing touched).
    pub changed: bool,
    /// The file did not exist and was created.
    pub created: bool,
    pub changes: Vec<Change>,
    /// Where the original is kept.
    pub backup: Option<PathBuf>,
    pub restart: Restart,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

/// What disconnect did to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Reverted {
    /// Unchanged since MetaClaw wrote it: the original bytes are back.
    Restored,
    /// MetaClaw created it: it is gone again.
    Deleted,
    /// The user changed it since: MetaClaw's keys are back to their original values,
    /// the user's other changes stay.
    KeysReverted { keys: Vec<String> },
    /// Already as it was before MetaClaw (or already gone): nothing written.
    Unchanged,
}

#[derive(Debug, Clone, Serialize)]
pub struct RevertedFile {
    pub path: PathBuf,
    #[serde(flatten)]
    pub action: Reverted,
}

#[derive(Debug, Clone, Serialize)]
pub struct Disconnected {
    pub agent: String,
    pub files: Vec<RevertedFile>,
    pub changed: bool,
    pub restart: Restart,
    pub warnings: Vec<String>,
}

/// Where an agent's config points, key masked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndpointView {
    pub protocol: Protocol,
    pub base: String,
    pub api_key: String,
    pub model: String,
}

impl From<&Endpoint> for EndpointView {
    fn from(e: &Endpoint) -> Self {
        EndpointView {
            protocol: e.protocol,
            base: e.base.clone(),
            api_key: mask(&e.api_key),
            model: e.model.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub agent: String,
    /// The agent's binary is on `PATH` or its config exists.
    pub installed: bool,
    pub binary: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub config_exists: bool,
    /// MetaClaw holds a backup (it connected the agent and has not disconnected it).
    pub backed_up: bool,
    /// The config points at the base MetaClaw wrote (or, when the adapter cannot read the
    /// config back, a backup exists).
    pub connected: bool,
    /// Where the config points now.
    pub points_at: Option<EndpointView>,
    /// Something that kept status from being read fully (a corrupt config or manifest).
    pub problem: Option<String>,
    pub notes: Vec<String>,
}

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
            notes: adapter.notes(),
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
        notes: adapter.notes(),
    })
}

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
    let resolved = adapter.resolve_endpoint(env);
    if let Some(path) = &config {
        match fs::read(resolve(path)) {
            Ok(bytes) => {
                config_exists = true;
                let text = String::from_utf8_lossy(&bytes);
                match (opts.open)(adapter.format(), &text) {
                    Ok(_) if resolved.is_some() => {}
                    Ok(d) => points_at = adapter.read_back(d.as_ref()),
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
    let connected = match &points_at {
        Some(ep) => bases.iter().any(|b| same_base(b, &ep.base)),
        None => backup.is_some(),
    };
    if backup.is_some() && !connected {
        problems.push(
            "the config no longer points at MetaClaw (changed since connecting); connect again or disconnect"
                .to_owned(),
        );
    }
    Status {
        agent: adapter.name().to_owned(),
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

/// The change `connect` would make to the agent's config.
struct Plan {
    /// The adapter's path (what the manifest records).
    path: PathBuf,
    /// Where bytes are written: the path with a symlink resolved, so a config kept in a
    /// dotfiles repository stays a link.
    real: PathBuf,
    /// The current bytes; `None` when the file does not exist.
    current: Option<Vec<u8>>,
    mode: Option<u32>,
    edits: Vec<Edit>,
    rendered: String,
    changes: Vec<Change>,
}

impl Plan {
    fn unchanged(&self) -> bool {
        self.current.as_deref() == Some(self.rendered.as_bytes())
    }
}

/// Text a created file starts from: empty if the format's editor accepts it, else an empty
/// object (`{}` for JSON5 and YAML).
const SEEDS: [&str; 2] = ["", "{}\n"];

/// The change to the main config file, then to each companion file (see
/// [`Adapter::companion_files`]); `None` for an agent without a config file.
fn plans(
    opts: &Options,
    adapter: &dyn Adapter,
    env: &Env,
    target: &Target,
) -> Result<Option<Vec<Plan>>, ClawError> {
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

fn strs(path: &[String]) -> Vec<&str> {
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

fn write_config(plan: &Plan) -> Result<(), ClawError> {
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
fn resolve(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
        }
        _ => path.to_owned(),
    }
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

/// `known`: secrets the agent may print when it fails (the key just written or just
/// removed); they are masked in what the result carries.
fn restart(opts: &Options, adapter: &dyn Adapter, env: &Env, known: &[&str]) -> Restart {
    let Some(mut argv) = adapter.restart_command(env) else {
        return Restart::NoCommand;
    };
    let Some(program) = argv.first().cloned() else {
        return Restart::NoCommand;
    };
    let found = if Path::new(&program).is_absolute() {
        Some(PathBuf::from(&program)).filter(|p| p.is_file())
    } else {
        env.which(&program)
    };
    let Some(found) = found else {
        return Restart::ProgramMissing { program };
    };
    let command = argv.join(" ");
    // Judged on the command as the adapter wrote it, not on the directory it was found in.
    let timeout = if argv.iter().any(|a| a.contains("restart")) {
        opts.restart_timeout
    } else {
        opts.command_timeout
    };
    // The runner resolves argv[0] against the process's PATH, which may not be env's.
    argv[0] = found.to_string_lossy().into_owned();
    tracing::info!(agent = adapter.name(), %command, "reloading the agent");
    match env.runner.run(&argv, timeout) {
        Ok(out) if out.timed_out => Restart::TimedOut {
            command,
            after_secs: timeout.as_secs(),
        },
        Ok(out) if out.success() => Restart::Done { command },
        Ok(out) => Restart::Failed {
            command,
            code: out.code,
            detail: tail(
                if out.stderr.trim().is_empty() {
                    &out.stdout
                } else {
                    &out.stderr
                },
                known,
            ),
        },
        Err(e) => Restart::Failed {
            command,
            code: None,
            detail: e.to_string(),
        },
    }
}

/// The last line or so of a command's output, enough to say why it failed.
fn tail(s: &str, known: &[&str]) -> String {
    let line = s.trim().lines().last().unwrap_or_default().trim();
    let chars: Vec<char> = line.chars().collect();
    let start = chars.len().saturating_sub(300);
    scrub(&chars[start..].iter().collect::<String>(), known)
}

/// `sk-…abcd`: enough to recognise a key, not enough to use it. Short keys are hidden
/// entirely.
pub fn mask(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    if chars.len() < 12 {
        return "…".to_owned();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// Whether a key's name says its value is a credential.
fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with("key")
        || n.contains("apikey")
        || n.contains("api_key")
        || n.contains("api-key")
        || n.contains("token") && !n.contains("max") && !n.contains("limit")
        || n.contains("secret")
        || n.contains("password")
        || n.contains("passwd")
        || n.contains("authorization")
        || n.contains("credential")
}

fn looks_like_key(s: &str) -> bool {
    // `mc-`: MetaClaw's own proxy keys.
    s.len() >= 16 && (s.starts_with("sk-") || s.starts_with("sk_") || s.starts_with("mc-"))
}

/// `v` with every credential masked: values under secret-looking names, the known
/// secrets (MetaClaw's proxy key) and strings shaped like provider keys.
fn masked(name: Option<&str>, v: &Value, known: &[&str]) -> Value {
    match v {
        Value::String(s) => {
            let secret = name.is_some_and(secret_name)
                || known.iter().any(|k| !k.is_empty() && s.contains(k))
                || looks_like_key(s);
            if secret {
                Value::String(mask(s))
            } else {
                v.clone()
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| masked(name, i, known)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, i)| (k.clone(), masked(Some(k), i, known)))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// Text (a parser's message, a command's output) with credentials masked.
fn scrub(text: &str, known: &[&str]) -> String {
    let mut out = text.to_owned();
    for k in known.iter().filter(|k| !k.is_empty()) {
        out = out.replace(k, &mask(k));
    }
    let words: Vec<String> = out
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '=' | ':'))
        .filter(|w| looks_like_key(w))
        .map(str::to_owned)
        .collect();
    for w in words {
        out = out.replace(&w, &mask(&w));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use serde_json::json;

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

    #[test]
    fn mask_keeps_a_recognisable_hint_only() {
        assert_eq!(mask("sk-proj-abcdefghijklmnop"), "sk-…mnop");
        assert_eq!(mask("short"), "…");
        assert_eq!(mask(""), "");
    }

    #[test]
    fn masked_hides_credentials_at_any_depth() {
        let v = json!({
            "baseUrl": "http://127.0.0.1:30000/v1",
            "apiKey": "metaclaw-proxy-key-123456",
            "headers": {"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz"},
            "note": "sk-ant-0123456789abcdef",
            "maxTokens": 8192,
        });
        let m = masked(Some("provider"), &v, &["metaclaw-proxy-key-123456"]);
        let s = m.to_string();
        assert!(!s.contains("metaclaw-proxy-key-123456"));
        assert!(!s.contains("abcdefghijklmnopqrstuvwxyz"));
        assert!(!s.contains("sk-ant-0123456789abcdef"));
        assert!(s.contains("http://127.0.0.1:30000/v1"));
        assert!(s.contains("8192"));
    }

    #[test]
    fn scrub_masks_known_and_key_shaped_words() {
        let s = scrub(
            "line 3: api_key = \"sk-live-0123456789abcdef\" near mine-secret-value",
            &["mine-secret-value"],
        );
        assert!(!s.contains("sk-live-0123456789abcdef"));
        assert!(!s.contains("mine-secret-value"));
    }
}
