//! A library shared by a team through a git repository (`skills.sync.remote`).
//!
//! One sync: fetch the team's branch (the remote is the truth; the local clone is rebuilt
//! from it every time, so nothing half-done survives), then compare each skill with what
//! the last sync agreed on (`manifest`):
//! - changed here only (learned, written or edited here) → sent to the team;
//! - changed in the team only → received, through the safety gate (flagged ones are
//!   quarantined, never written into the library);
//! - changed on both sides → both kept: the team's version under its name, this one as
//!   `<name>-<who>`, disabled, here and in the team, and the report says so;
//! - deleted by the user here (`metaclaw skills delete`) → removed from the team; removed by
//!   a teammate and unchanged here → removed here. A file that is merely missing is never a
//!   deletion: it is received again.
//!
//! Offline, or a push the remote refused: nothing is lost; the changes are still changes
//! at the next sync, which retries.

mod git;
mod manifest;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

pub use manifest::{Manifest, content_hash};

use crate::gate::{self, Finding};
use crate::library::Library;
use crate::parse::{SkillError, is_slug};
use crate::quarantine::{self, copy_resources};
use crate::skill::{Provenance, Skill, Source};
use crate::write::write_skill_atomically;
use git::{Git, run_in};

/// Why a sync could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error("the git command is not available: {0}")]
    NoGit(String),
    #[error("git {command} failed: {message}")]
    Git { command: String, message: String },
    #[error("the team sync record: {0}")]
    Manifest(String),
    /// A remote git would read as one of its own options (`--upload-pack=…` runs a command).
    #[error("the team library's remote {0:?} starts with `-`; give a URL or a path")]
    OptionLikeRemote(String),
    #[error(transparent)]
    Skill(#[from] SkillError),
}

/// Where and as whom to sync.
#[derive(Debug, Clone)]
pub struct Team {
    /// Any URL `git` reaches with the user's credentials (a path to a bare repository too).
    pub remote: String,
    pub branch: String,
    /// The local clone (MetaClaw's own; rebuilt from the remote at every sync).
    pub clone: PathBuf,
    /// A slug naming this member, for commits and for the second name of a conflicting
    /// version.
    pub who: String,
}

impl Team {
    /// The remote as it may be shown, logged and written into skills: without the user and
    /// password an HTTPS URL may carry (`https://user:token@host/…` → `https://host/…`).
    pub fn shown_remote(&self) -> String {
        without_userinfo(&self.remote)
    }
}

/// `text` with every URL's user and password taken out (`https://user:token@host/…` →
/// `https://host/…`): for the remote, and for what `git` says about it, which can repeat it.
pub fn without_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority runs to the first slash, space or quote.
        let end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '\'' || c == '"')
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        out.push_str(
            authority
                .rfind('@')
                .map_or(authority, |at| &authority[at + 1..]),
        );
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SyncReport {
    /// Skills of this library sent to the team.
    pub sent: Vec<String>,
    /// Team skills written into this library.
    pub received: Vec<String>,
    /// Team skills the safety gate held back, with why.
    pub quarantined: Vec<(String, Vec<Finding>)>,
    /// Skills changed on both sides: each kept twice, as said here.
    pub conflicts: Vec<String>,
    /// Removed from the team (deleted here) or from here (deleted by a teammate).
    pub deleted: Vec<String>,
    /// Why the team could not be reached or refused the changes; they wait for the next
    /// sync.
    pub waiting: Option<String>,
}

/// Marks `name` as deleted by the user, so the next sync removes it from the team too.
pub fn record_deletion(library: &Path, name: &str) -> Result<(), TeamError> {
    let mut manifest = Manifest::load(library)?;
    if manifest.synced.contains_key(name) {
        manifest.deleted.insert(name.to_owned());
        manifest.save(library)?;
    }
    Ok(())
}

/// One sync of `library` with `team`. The first one creates the library folder, the clone
/// and the sync record, so it works in a home where MetaClaw never ran.
pub fn sync(library: &Path, team: &Team) -> Result<SyncReport, TeamError> {
    if team.remote.starts_with('-') {
        return Err(TeamError::OptionLikeRemote(team.shown_remote()));
    }
    fs::create_dir_all(library).map_err(|e| SkillError::io(library, e))?;
    ensure_clone(team)?;
    let git = Git {
        dir: team.clone.clone(),
    };
    let mut manifest = Manifest::load(library)?;
    let mut report = SyncReport::default();
    if let Err(e) = git.run(&["fetch", "--quiet", "origin"]) {
        report.waiting = Some(format!("the team library is unreachable: {e}"));
        manifest.last_error = report.waiting.clone();
        manifest.save(library)?;
        return Ok(report);
    }
    reset_to_remote(&git, &team.branch)?;

    let local = Library::load(&[library.to_path_buf()]);
    let shared = Library::load(std::slice::from_ref(&team.clone));
    let mut sent_hashes: BTreeMap<String, String> = BTreeMap::new();
    let mut names: BTreeSet<String> = manifest.synced.keys().cloned().collect();
    names.extend(shared.skills.iter().map(|s| s.name.clone()));
    names.extend(
        local
            .skills
            .iter()
            .filter(|s| shares(s))
            .map(|s| s.name.clone()),
    );
    names.extend(manifest.deleted.iter().cloned());

    for name in names {
        let here = local.get(&name).filter(|s| shares(s));
        let there = shared.get(&name);
        let here_hash = here.map(|s| content_hash(s, folder_of(s)));
        let there_hash = there.map(|s| content_hash(s, folder_of(s)));
        let base = manifest.synced.get(&name).cloned();

        if manifest.deleted.contains(&name) {
            if there.is_some() {
                fs::remove_dir_all(team.clone.join(&name))
                    .map_err(|e| SkillError::io(&team.clone.join(&name), e))?;
                report.deleted.push(name.clone());
            }
            continue;
        }
        match (here, there) {
            (Some(_), Some(_)) if here_hash == there_hash => {
                if let Some(h) = here_hash {
                    manifest.synced.insert(name, h);
                }
            }
            (Some(mine), Some(theirs)) => {
                let mine_changed = base != here_hash;
                let theirs_changed = base != there_hash;
                if mine_changed && !theirs_changed {
                    send(mine, &team.clone)?;
                    sent_hashes.insert(name.clone(), here_hash.unwrap_or_default());
                    report.sent.push(name);
                } else if theirs_changed && !mine_changed {
                    receive(library, theirs, team, &mut manifest, &mut report)?;
                } else {
                    conflict(library, mine, theirs, team, &mut manifest, &mut report)?;
                    if let Some(h) = there_hash {
                        manifest.synced.insert(name, h);
                    }
                }
            }
            (Some(mine), None) => {
                if base.is_some() && base == here_hash {
                    // Shared before, unchanged here, gone from the team: a teammate deleted it.
                    if let Some(dir) = folder_of(mine) {
                        fs::remove_dir_all(dir).map_err(|e| SkillError::io(dir, e))?;
                    }
                    manifest.synced.remove(&name);
                    report.deleted.push(name);
                } else {
                    send(mine, &team.clone)?;
                    sent_hashes.insert(name.clone(), here_hash.unwrap_or_default());
                    report.sent.push(name);
                }
            }
            (None, Some(theirs)) => match local.get(&name) {
                // A built-in or imported skill of that name stays: it is not the team's to
                // replace, and replacing it would lose it.
                Some(own)
                    if there_hash.as_deref()
                        == Some(content_hash(own, folder_of(own)).as_str()) =>
                {
                    manifest
                        .synced
                        .insert(name, content_hash(own, folder_of(own)));
                }
                Some(own) => report.conflicts.push(format!(
                    "{name}: the team has a skill of the same name as this {} skill, which stays; \
                     the team's version was not received",
                    own.source.word()
                )),
                None => receive(library, theirs, team, &mut manifest, &mut report)?,
            },
            (None, None) => {
                manifest.synced.remove(&name);
            }
        }
    }

    if git.run(&["status", "--porcelain"])?.is_empty() {
        manifest.deleted.clear();
    } else {
        commit(&git, team, &report)?;
        match git.run(&[
            "push",
            "--quiet",
            "origin",
            &format!("HEAD:{}", team.branch),
        ]) {
            Ok(_) => {
                manifest.synced.extend(sent_hashes);
                for name in &report.deleted {
                    manifest.synced.remove(name);
                }
                manifest.deleted.clear();
                manifest.pending.clear();
            }
            Err(e) => {
                report.waiting = Some(format!("the team library refused the changes: {e}"));
                manifest.pending = report.sent.clone();
            }
        }
    }
    manifest.last_error = report.waiting.clone();
    manifest.last_sync_ms = Some(now_ms());
    manifest.save(library)?;
    Ok(report)
}

/// Which skills of this library are shared: learned ones, the user's own, and team ones
/// (edited here, they go back). Built-in and imported skills stay here.
fn shares(skill: &Skill) -> bool {
    matches!(skill.source, Source::Evolved | Source::User | Source::Team)
}

fn folder_of(skill: &Skill) -> Option<&Path> {
    skill.path.as_deref().and_then(Path::parent)
}

fn ensure_clone(team: &Team) -> Result<(), TeamError> {
    if team.clone.join(".git").is_dir() {
        // After `--`, a remote is never read as an option.
        run_in(
            &team.clone,
            &["remote", "set-url", "origin", "--", &team.remote],
        )?;
        return Ok(());
    }
    let parent = team.clone.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|e| SkillError::io(parent, e))?;
    let target = team.clone.to_string_lossy().into_owned();
    run_in(parent, &["init", "--quiet", &target])?;
    run_in(
        &team.clone,
        &["remote", "add", "origin", "--", &team.remote],
    )?;
    Ok(())
}

/// Makes the clone exactly the remote branch (or an empty new branch when the remote has
/// none yet).
fn reset_to_remote(git: &Git, branch: &str) -> Result<(), TeamError> {
    let remote_ref = format!("origin/{branch}");
    if git
        .ask(&["rev-parse", "--verify", "--quiet", &remote_ref])?
        .is_some()
    {
        git.run(&["checkout", "--quiet", "--force", "-B", branch, &remote_ref])?;
        git.run(&["reset", "--quiet", "--hard", &remote_ref])?;
    } else if git
        .ask(&["rev-parse", "--verify", "--quiet", "HEAD"])?
        .is_some()
    {
        // Local commits the remote never accepted, and the remote has no branch yet: start
        // again from nothing (the pushes name the branch, so the local name does not matter).
        git.run(&[
            "checkout",
            "--quiet",
            "--orphan",
            &format!("start-{}", now_ms()),
        ])?;
        git.run(&["rm", "-r", "-q", "--cached", "--ignore-unmatch", "."])?;
    }
    git.run(&["clean", "-f", "-d", "-q", "-x"])?;
    Ok(())
}

/// Writes a skill of this library into the clone (with its resource files).
fn send(skill: &Skill, clone: &Path) -> Result<(), TeamError> {
    let target = clone.join(&skill.name);
    if target.exists() {
        fs::remove_dir_all(&target).map_err(|e| SkillError::io(&target, e))?;
    }
    fs::create_dir_all(&target).map_err(|e| SkillError::io(&target, e))?;
    if let Some(dir) = folder_of(skill) {
        copy_resources(dir, &target)?;
    }
    let mut out = skill.clone();
    out.path = None;
    write_skill_atomically(clone, &out)?;
    Ok(())
}

/// Writes a team skill into this library, unless the gate flags it.
fn receive(
    library: &Path,
    theirs: &Skill,
    team: &Team,
    manifest: &mut Manifest,
    report: &mut SyncReport,
) -> Result<(), TeamError> {
    let hash = content_hash(theirs, folder_of(theirs));
    let mut skill = theirs.clone();
    skill.path = None;
    skill.source = Source::Team;
    skill
        .provenance
        .get_or_insert_with(Provenance::default)
        .origin = Some(format!("team: {}", team.shown_remote()));
    let findings = gate::scan(&skill);
    if !findings.is_empty() {
        let already = quarantine::list(library)
            .iter()
            .any(|h| h.name == skill.name && h.reasons == findings);
        if !already {
            let origin = format!("team: {}", team.shown_remote());
            quarantine::hold(
                library,
                &skill,
                folder_of(theirs),
                findings.clone(),
                &origin,
            )?;
            report.quarantined.push((skill.name.clone(), findings));
        }
        return Ok(());
    }
    place(library, &skill, folder_of(theirs))?;
    manifest.synced.insert(skill.name.clone(), hash);
    report.received.push(skill.name);
    Ok(())
}

/// Both sides changed `mine`/`theirs` since the last sync: the team's version takes the
/// name here, this one is kept as `<name>-<who>`, disabled, here and in the team.
fn conflict(
    library: &Path,
    mine: &Skill,
    theirs: &Skill,
    team: &Team,
    manifest: &mut Manifest,
    report: &mut SyncReport,
) -> Result<(), TeamError> {
    let second = format!("{}-{}", mine.name, team.who);
    let mut kept = mine.clone();
    kept.name = if is_slug(&second) {
        second
    } else {
        format!("{}-mine", mine.name)
    };
    kept.disabled = true;
    let from = folder_of(mine).map(Path::to_path_buf);
    place(library, &kept, from.as_deref())?;
    send(&kept, &team.clone)?;
    report.conflicts.push(format!(
        "{}: changed here and in the team; the team's version is `{}`, yours is kept as `{}` (disabled)",
        mine.name, mine.name, kept.name
    ));
    let before = report.received.len();
    receive(library, theirs, team, manifest, report)?;
    report.received.truncate(before);
    Ok(())
}

/// Writes `skill` (and the resource files of `from`) as the library's folder of its name.
fn place(library: &Path, skill: &Skill, from: Option<&Path>) -> Result<(), TeamError> {
    let target = library.join(&skill.name);
    let staged = library.join(format!(".staged-team-{}", skill.name));
    if staged.exists() {
        fs::remove_dir_all(&staged).map_err(|e| SkillError::io(&staged, e))?;
    }
    fs::create_dir_all(&staged).map_err(|e| SkillError::io(&staged, e))?;
    if let Some(dir) = from {
        copy_resources(dir, &staged)?;
    }
    let mut out = skill.clone();
    out.path = None;
    let text = crate::write::render_skill(&out)?;
    crate::write::write_atomically(&staged.join("SKILL.md"), text.as_bytes())?;
    crate::history::keep(library, &skill.name, "team")?;
    if target.exists() {
        fs::remove_dir_all(&target).map_err(|e| SkillError::io(&target, e))?;
    }
    fs::rename(&staged, &target).map_err(|e| SkillError::io(&target, e))?;
    Ok(())
}

fn commit(git: &Git, team: &Team, report: &SyncReport) -> Result<(), TeamError> {
    git.run(&["add", "--all"])?;
    let mut parts = Vec::new();
    if !report.sent.is_empty() {
        parts.push(format!("shared {}", report.sent.join(", ")));
    }
    if !report.deleted.is_empty() {
        parts.push(format!("removed {}", report.deleted.join(", ")));
    }
    if !report.conflicts.is_empty() {
        parts.push(format!(
            "kept {} conflicting version(s)",
            report.conflicts.len()
        ));
    }
    let message = format!("MetaClaw ({}): {}", team.who, parts.join("; "));
    // The user's own identity when git has one; else a neutral one for this machine.
    let mut args: Vec<String> = Vec::new();
    if git.ask(&["config", "user.email"])?.is_none() {
        args.extend([
            "-c".into(),
            format!("user.name=MetaClaw ({})", team.who),
            "-c".into(),
            "user.email=metaclaw@localhost".into(),
        ]);
    }
    // A background job cannot answer a signing passphrase prompt: MetaClaw's own commits
    // are not signed, whatever the user's git config says.
    args.extend([
        "-c".into(),
        "commit.gpgsign=false".into(),
        "commit".into(),
        "--quiet".into(),
        "--no-verify".into(),
        "-m".into(),
        message,
    ]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    git.run(&refs)?;
    Ok(())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn user_and_password_are_taken_out_of_every_url() {
        assert_eq!(
            without_userinfo("https://ann:s3cret@git.example.com/team/skills.git"),
            "https://git.example.com/team/skills.git"
        );
        assert_eq!(
            without_userinfo(
                "fatal: unable to access 'https://ann:s3cret@host:8443/x.git/': refused; see http://tok@h"
            ),
            "fatal: unable to access 'https://host:8443/x.git/': refused; see http://h"
        );
        // No URL, no password to take out.
        assert_eq!(without_userinfo("/srv/team.git"), "/srv/team.git");
        assert_eq!(
            without_userinfo("git@github.com:team/skills.git"),
            "git@github.com:team/skills.git"
        );
        assert_eq!(without_userinfo("ssh://git@host/x.git"), "ssh://host/x.git");
    }

    #[test]
    fn a_failing_git_never_repeats_the_password() {
        let dir = tempfile::tempdir().unwrap();
        git::run_in(dir.path(), &["init", "-q"]).unwrap();
        // git repeats the argument it could not use, as it may repeat a remote's URL.
        let url = "https://ann:s3cret-77@127.0.0.1:1/team.git";
        let e = git::run_in(dir.path(), &["checkout", url])
            .map(|_| ())
            .unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.contains("'https://127.0.0.1:1/team.git' did not match"),
            "{shown}"
        );
        assert!(!shown.contains("s3cret-77"), "{shown}");
    }
}
