//! `nanoclaw`: the `.env` in NanoClaw's checkout, speaking the Anthropic protocol
//! (`ANTHROPIC_BASE_URL` without `/v1`). The checkout is found through the service that
//! runs it (systemd user unit, launchd agent), else in the usual clone locations.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Protocol, Target};

pub struct NanoClaw;

const UNIT: &str = ".config/systemd/user/nanoclaw.service";
const PLIST: &str = "Library/LaunchAgents/com.nanoclaw.plist";
const CHECKOUTS: [&str; 3] = ["nanoclaw", "code/nanoclaw", ".nanoclaw"];

fn text(doc: &dyn Doc, key: &str) -> Option<String> {
    match doc.get(&[key])? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// `WorkingDirectory=` of a systemd unit (`-` prefix and `%h` allowed).
fn unit_dir(unit: &str, home: &Path) -> Option<PathBuf> {
    unit.lines().find_map(|line| {
        let value = line.trim().strip_prefix("WorkingDirectory")?.trim_start();
        let value = value.strip_prefix('=')?.trim();
        let value = value.strip_prefix('-').unwrap_or(value);
        expand(value.trim_matches('"'), home)
    })
}

/// `<key>WorkingDirectory</key><string>…</string>` of a launchd plist.
fn plist_dir(plist: &str, home: &Path) -> Option<PathBuf> {
    const KEY: &str = "<key>WorkingDirectory</key>";
    let after = &plist[plist.find(KEY)? + KEY.len()..];
    // Only a `<string>` right after the key counts.
    let value = after.trim_start().strip_prefix("<string>")?;
    let end = value.find("</string>")?;
    expand(value[..end].trim(), home)
}

fn expand(dir: &str, home: &Path) -> Option<PathBuf> {
    if dir.is_empty() {
        return None;
    }
    if dir == "~" || dir == "%h" {
        return Some(home.to_path_buf());
    }
    match dir.strip_prefix("~/").or_else(|| dir.strip_prefix("%h/")) {
        Some(rest) => Some(home.join(rest)),
        None => Some(PathBuf::from(dir)),
    }
}

impl NanoClaw {
    /// NanoClaw's checkout: the service's working directory first (the one actually
    /// running), the platform's own service manager before the other's.
    fn checkout(&self, env: &Env) -> Result<PathBuf, ClawError> {
        let systemd = || {
            let unit = std::fs::read_to_string(env.home_path(UNIT)).ok()?;
            unit_dir(&unit, &env.home)
        };
        let launchd = || {
            let plist = std::fs::read_to_string(env.home_path(PLIST)).ok()?;
            plist_dir(&plist, &env.home)
        };
        let from_service = if cfg!(target_os = "macos") {
            launchd().or_else(systemd)
        } else {
            systemd().or_else(launchd)
        };
        if let Some(dir) = from_service {
            return Ok(dir);
        }
        CHECKOUTS
            .iter()
            .map(|rel| env.home_path(rel))
            .find(|p| p.is_dir())
            .ok_or_else(|| ClawError::NotFound {
                agent: "nanoclaw".into(),
                hint: format!(
                    "no WorkingDirectory in ~/{UNIT} or ~/{PLIST}, and none of ~/nanoclaw, \
                     ~/code/nanoclaw, ~/.nanoclaw exists; set ANTHROPIC_BASE_URL and \
                     ANTHROPIC_API_KEY in your NanoClaw checkout's .env by hand"
                ),
            })
    }
}

impl Adapter for NanoClaw {
    fn name(&self) -> &'static str {
        "nanoclaw"
    }

    fn protocol(&self) -> Protocol {
        Protocol::Anthropic
    }

    /// NanoClaw is a checkout run by a service, not a command on `PATH`.
    fn binary(&self) -> Option<&'static str> {
        None
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(self.checkout(env)?.join(".env")))
    }

    fn format(&self) -> Format {
        Format::Dotenv
    }

    fn edits(&self, _doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        Ok(vec![
            Edit::set(&["ANTHROPIC_BASE_URL"], json!(target.anthropic_base)),
            Edit::set(&["ANTHROPIC_API_KEY"], json!(target.api_key)),
        ])
    }

    /// The model is NanoClaw's own choice unless `ANTHROPIC_MODEL` pins it (empty then).
    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        Some(Endpoint {
            protocol: Protocol::Anthropic,
            base: text(doc, "ANTHROPIC_BASE_URL")?,
            api_key: text(doc, "ANTHROPIC_API_KEY").unwrap_or_default(),
            model: text(doc, "ANTHROPIC_MODEL").unwrap_or_default(),
        })
    }

    fn restart_command(&self, env: &Env) -> Option<Vec<String>> {
        if cfg!(target_os = "macos") {
            let uid = home_uid(&env.home)?;
            Some(vec![
                "launchctl".into(),
                "kickstart".into(),
                "-k".into(),
                format!("gui/{uid}/com.nanoclaw"),
            ])
        } else {
            Some(vec![
                "systemctl".into(),
                "--user".into(),
                "restart".into(),
                "nanoclaw".into(),
            ])
        }
    }
}

/// The user's id as the owner of their home directory (no `unsafe` `getuid`).
#[cfg(unix)]
fn home_uid(home: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(home).ok().map(|m| m.uid())
}

#[cfg(not(unix))]
fn home_uid(_home: &Path) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn reads_working_directories() {
        let home = Path::new("/home/u");
        let unit = "[Unit]\nDescription=NanoClaw\n\n[Service]\nWorkingDirectory=%h/src/nanoclaw\nExecStart=/usr/bin/node dist/index.js\n";
        assert_eq!(
            unit_dir(unit, home),
            Some(PathBuf::from("/home/u/src/nanoclaw"))
        );
        assert_eq!(
            unit_dir("WorkingDirectory = -/opt/nano\n", home),
            Some(PathBuf::from("/opt/nano"))
        );
        assert_eq!(unit_dir("[Service]\nExecStart=x\n", home), None);
        let plist = "<dict>\n  <key>Label</key>\n  <string>com.nanoclaw</string>\n  <key>WorkingDirectory</key>\n  <string>/Users/u/nanoclaw</string>\n</dict>";
        assert_eq!(
            plist_dir(plist, home),
            Some(PathBuf::from("/Users/u/nanoclaw"))
        );
        assert_eq!(plist_dir("<key>Label</key><string>x</string>", home), None);
    }
}
