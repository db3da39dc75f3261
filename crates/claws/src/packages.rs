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

/// Where `package` lives under MetaClaw's home.
pub fn dir(metaclaw_home: &Path, package: &Package) -> PathBuf {
    metaclaw_home.join("integrations").join(package.agent)
}

/// Writes `package` under MetaClaw's home; its folder.
pub fn install(metaclaw_home: &Path, package: &Package) -> Result<PathBuf, ClawError> {
    let dir = dir(metaclaw_home, package);
    fs::create_dir_all(&dir).map_err(|e| ClawError::io(&dir, e))?;
    for (name, contents) in package.files {
        let path = dir.join(name);
        if fs::read(&path).is_ok_and(|held| held == contents.as_bytes()) {
            continue;
        }
        metaclaw_files::write_atomic(&path, contents.as_bytes(), Some(0o644))
            .map_err(|e| ClawError::io(&path, e))?;
    }
    Ok(dir)
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
    }
}
