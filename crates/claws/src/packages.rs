//! The plugin packages MetaClaw installs into agents, carried inside the binary (so a
//! packaged MetaClaw needs no source tree) and written under MetaClaw's home,
//! `<home>/integrations/<agent>/`, where the agent's config points. Written at every connect,
//! so an upgraded MetaClaw brings its plugin up to date with it; a file already holding the
//! same bytes is left alone.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::ClawError;

/// One package: its folder name and its files (name, contents).
pub struct Package {
    pub agent: &'static str,
    pub files: &'static [(&'static str, &'static str)],
}

/// OpenClaw's context engine (`integrations/openclaw/` in the source tree).
pub const OPENCLAW: Package = Package {
    agent: "openclaw",
    files: &[
        (
            "package.json",
            include_str!("../../../integrations/openclaw/package.json"),
        ),
        (
            "openclaw.plugin.json",
            include_str!("../../../integrations/openclaw/openclaw.plugin.json"),
        ),
        (
            "index.ts",
            include_str!("../../../integrations/openclaw/index.ts"),
        ),
        (
            "client.ts",
            include_str!("../../../integrations/openclaw/client.ts"),
        ),
        (
            "turn.ts",
            include_str!("../../../integrations/openclaw/turn.ts"),
        ),
    ],
};

/// Hermes' memory provider (`integrations/hermes/` in the source tree); Hermes finds it
/// through a link at `$HERMES_HOME/plugins/metaclaw`.
pub const HERMES: Package = Package {
    agent: "hermes",
    files: &[
        (
            "metaclaw/__init__.py",
            include_str!("../../../integrations/hermes/metaclaw/__init__.py"),
        ),
        (
            "metaclaw/plugin.yaml",
            include_str!("../../../integrations/hermes/metaclaw/plugin.yaml"),
        ),
    ],
};

/// Where `package` lives under MetaClaw's home.
pub fn dir(metaclaw_home: &Path, package: &Package) -> PathBuf {
    metaclaw_home.join("integrations").join(package.agent)
}

/// Writes `package` under MetaClaw's home; its folder.
pub fn install(metaclaw_home: &Path, package: &Package) -> Result<PathBuf, ClawError> {
    let dir = dir(metaclaw_home, package);
    for (name, contents) in package.files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| ClawError::io(parent, e))?;
        }
        if fs::read(&path).is_ok_and(|held| held == contents.as_bytes()) {
            continue;
        }
        metaclaw_files::write_atomic(&path, contents.as_bytes(), Some(0o644))
            .map_err(|e| ClawError::io(&path, e))?;
    }
    Ok(dir)
}

/// Whether `target` (a link's destination) is inside a package of `package`'s kind, under
/// whichever MetaClaw home.
fn ours(target: &Path, package: &Package) -> bool {
    let parts: Vec<_> = target.components().map(|c| c.as_os_str()).collect();
    parts
        .windows(2)
        .any(|w| w[0] == "integrations" && w[1] == package.agent)
}

/// Makes `link` point at `sub` inside the installed package, where the agent looks for it.
/// A link of an older install (MetaClaw's home moved) is replaced; anything else already
/// there (a copy the user installed by hand) is left alone, and `false` says so.
pub fn link(
    metaclaw_home: &Path,
    package: &Package,
    sub: &str,
    link: &Path,
) -> Result<bool, ClawError> {
    let target = dir(metaclaw_home, package).join(sub);
    match fs::symlink_metadata(link) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let current = fs::read_link(link).map_err(|e| ClawError::io(link, e))?;
            if current == target {
                return Ok(true);
            }
            if !ours(&current, package) {
                return Ok(false);
            }
            fs::remove_file(link).map_err(|e| ClawError::io(link, e))?;
        }
        Ok(_) => return Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(ClawError::io(link, e)),
    }
    if let Some(parent) = link.parent() {
        fs::create_dir_all(parent).map_err(|e| ClawError::io(parent, e))?;
    }
    symlink(&target, link).map_err(|e| ClawError::io(link, e))?;
    Ok(true)
}

/// Removes `link` when it is MetaClaw's (a link into a package of this kind), and its folder
/// when that is left empty; anything else stays.
pub fn unlink(package: &Package, link: &Path) -> Result<bool, ClawError> {
    let Ok(meta) = fs::symlink_metadata(link) else {
        return Ok(false);
    };
    if !meta.file_type().is_symlink() {
        return Ok(false);
    }
    let current = fs::read_link(link).map_err(|e| ClawError::io(link, e))?;
    if !ours(&current, package) {
        return Ok(false);
    }
    fs::remove_file(link).map_err(|e| ClawError::io(link, e))?;
    if let Some(parent) = link.parent() {
        // Only succeeds when empty.
        let _ = fs::remove_dir(parent);
    }
    Ok(true)
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_dir(target, link)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_package_is_written_whole_and_brought_up_to_date() {
        let home = tempfile::tempdir().unwrap();
        let dir = install(home.path(), &OPENCLAW).unwrap();
        assert_eq!(dir, home.path().join("integrations/openclaw"));
        for (name, contents) in OPENCLAW.files {
            assert_eq!(fs::read_to_string(dir.join(name)).unwrap(), *contents);
        }
        // A file changed by hand (or by an older MetaClaw) is replaced; the rest stay.
        fs::write(dir.join("index.ts"), "stale").unwrap();
        install(home.path(), &OPENCLAW).unwrap();
        assert_eq!(
            fs::read_to_string(dir.join("index.ts")).unwrap(),
            OPENCLAW.files[2].1
        );
        let manifest: serde_json::Value = serde_json::from_str(OPENCLAW.files[1].1).unwrap();
        assert_eq!(manifest["id"], "metaclaw");
        assert_eq!(manifest["kind"], "context-engine");
        let hermes = install(home.path(), &HERMES).unwrap();
        assert!(hermes.join("metaclaw/__init__.py").is_file());
        assert!(hermes.join("metaclaw/plugin.yaml").is_file());
    }

    #[test]
    fn the_link_is_made_kept_moved_and_removed_but_never_over_the_users_own() {
        let home = tempfile::tempdir().unwrap();
        let agent = tempfile::tempdir().unwrap();
        let at = agent.path().join("plugins/metaclaw");
        install(home.path(), &HERMES).unwrap();
        assert!(link(home.path(), &HERMES, "metaclaw", &at).unwrap());
        assert!(at.join("__init__.py").is_file());
        assert!(link(home.path(), &HERMES, "metaclaw", &at).unwrap());
        // MetaClaw's home moved: the link follows.
        let moved = tempfile::tempdir().unwrap();
        install(moved.path(), &HERMES).unwrap();
        assert!(link(moved.path(), &HERMES, "metaclaw", &at).unwrap());
        assert_eq!(
            fs::read_link(&at).unwrap(),
            dir(moved.path(), &HERMES).join("metaclaw")
        );
        assert!(unlink(&HERMES, &at).unwrap());
        assert!(!agent.path().join("plugins").exists());
        // A copy installed by hand is the user's: neither replaced nor removed.
        fs::create_dir_all(&at).unwrap();
        fs::write(at.join("__init__.py"), "mine").unwrap();
        assert!(!link(home.path(), &HERMES, "metaclaw", &at).unwrap());
        assert!(!unlink(&HERMES, &at).unwrap());
        assert_eq!(fs::read_to_string(at.join("__init__.py")).unwrap(), "mine");
    }
}
