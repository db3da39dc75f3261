//! `claude-code` as a plugin: Claude Code keeps talking to its provider (a subscription
//! login included) and runs `metaclaw hook claude-code` from three hooks in its user
//! settings, `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when set):
//! `UserPromptSubmit` adds MetaClaw's context, `Stop` records the turn, `SessionEnd` ends the
//! session. Nothing secret goes into the file: the hook finds the engine through its run files.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::target::{Endpoint, Mode, PluginHost, Protocol, Target};

pub struct ClaudeCode;

/// The hook events MetaClaw handles.
const EVENTS: [&str; 3] = ["UserPromptSubmit", "Stop", "SessionEnd"];

/// The arguments after the binary; also how MetaClaw's entries are told from the user's.
const HOOK_ARGS: &str = "hook claude-code";

/// Seconds Claude Code gives a hook before going on without it: the hook's own calls give up
/// after two, so this only bounds a stuck process start.
const HOOK_TIMEOUT_S: u64 = 10;

/// The shell command of MetaClaw's hooks.
fn command(host: &PluginHost) -> String {
    let program = quote(&host.program.to_string_lossy());
    match &host.home {
        Some(home) => format!(
            "METACLAW_HOME={} {program} {HOOK_ARGS}",
            quote(&home.to_string_lossy())
        ),
        None => format!("{program} {HOOK_ARGS}"),
    }
}

/// `s` as one shell word: as it is when it has nothing the shell would read, else in single
/// quotes.
fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Whether a matcher group of `hooks.<event>` is MetaClaw's.
fn is_ours(group: &Value) -> bool {
    group["hooks"].as_array().is_some_and(|hooks| {
        !hooks.is_empty()
            && hooks.iter().all(|h| {
                h["command"]
                    .as_str()
                    .is_some_and(|c| c.trim_end().ends_with(HOOK_ARGS))
            })
    })
}

impl Adapter for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    /// What Claude Code speaks to its own provider; MetaClaw's proxy is not in the way.
    fn protocol(&self) -> Protocol {
        Protocol::Anthropic
    }

    fn mode(&self) -> Mode {
        Mode::Plugin
    }

    fn binary(&self) -> Option<&'static str> {
        Some("claude")
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        let dir = match env.var("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => env.home_path(".claude"),
        };
        Ok(Some(dir.join("settings.json")))
    }

    fn format(&self) -> Format {
        Format::Json5
    }

    /// Claude Code runs without a settings file; one made for the hooks is removed again on
    /// disconnect.
    fn creates_config(&self) -> bool {
        true
    }

    /// Each event's list keeps the user's own hooks in their order; MetaClaw's entry is
    /// replaced where it is (idempotent) or appended.
    fn edits(&self, doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        let host = target
            .plugin
            .as_ref()
            .ok_or("no `metaclaw` command to run from the hooks")?;
        let ours = json!({
            "hooks": [{"type": "command", "command": command(host), "timeout": HOOK_TIMEOUT_S}]
        });
        if let Some(hooks) = doc.get(&["hooks"])
            && !hooks.is_object()
        {
            return Err("`hooks` is not an object".into());
        }
        let mut edits = Vec::new();
        for event in EVENTS {
            let groups = match doc.get(&["hooks", event]) {
                None => Vec::new(),
                Some(Value::Array(groups)) => groups,
                Some(_) => return Err(format!("`hooks.{event}` is not a list")),
            };
            // The first of MetaClaw's entries is replaced in place; a second would run the
            // hook twice.
            let mut placed = false;
            let mut groups: Vec<Value> = groups
                .into_iter()
                .filter_map(|g| match (is_ours(&g), placed) {
                    (false, _) => Some(g),
                    (true, false) => {
                        placed = true;
                        Some(ours.clone())
                    }
                    (true, true) => None,
                })
                .collect();
            if !placed {
                groups.push(ours.clone());
            }
            edits.push(Edit::set(&["hooks", event], Value::Array(groups)));
        }
        Ok(edits)
    }

    /// No endpoint: Claude Code's requests do not go through MetaClaw.
    fn read_back(&self, _doc: &dyn Doc) -> Option<Endpoint> {
        None
    }

    fn plugged_in(&self, doc: &dyn Doc) -> bool {
        EVENTS.iter().all(|event| {
            matches!(doc.get(&["hooks", event]), Some(Value::Array(groups)) if groups.iter().any(is_ours))
        })
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "As a plugin (`metaclaw agent connect claude-code --plugin`), Claude Code keeps talking to its own provider (subscription logins included) and its hooks run `metaclaw hook claude-code`; sessions started after connecting use them.".into(),
        ]
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::Path;

    use super::*;
    use crate::doc::open;

    fn target() -> Target {
        Target {
            plugin: Some(PluginHost {
                program: PathBuf::from("/opt/Meta Claw/metaclaw"),
                home: Some(PathBuf::from("/home/u/.mc")),
                metaclaw_home: PathBuf::from("/home/u/.mc"),
            }),
            ..Target::local(30000, "mc-key-0123456789", "m")
        }
    }

    fn applied(text: &str, t: &Target) -> String {
        let doc = open(Format::Json5, text).unwrap();
        let mut after = open(Format::Json5, text).unwrap();
        for e in ClaudeCode.edits(doc.as_ref(), t).unwrap() {
            let p: Vec<&str> = e.path.iter().map(String::as_str).collect();
            after.set(&p, e.value.as_ref().unwrap()).unwrap();
        }
        after.render()
    }

    #[test]
    fn the_command_quotes_what_the_shell_would_split() {
        let host = target().plugin.unwrap();
        assert_eq!(
            command(&host),
            "METACLAW_HOME=/home/u/.mc '/opt/Meta Claw/metaclaw' hook claude-code"
        );
        let plain = PluginHost {
            program: Path::new("/usr/bin/metaclaw").into(),
            home: None,
            metaclaw_home: PathBuf::from("/home/u/.metaclaw"),
        };
        assert_eq!(command(&plain), "/usr/bin/metaclaw hook claude-code");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn the_users_hooks_and_settings_stay_and_a_second_connect_changes_nothing() {
        let text = r#"{
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  }
}
"#;
        let once = applied(text, &target());
        let v: Value = serde_json::from_str(&once).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"],
            "notify-send done"
        );
        for event in EVENTS {
            let groups = v["hooks"][event].as_array().unwrap();
            assert_eq!(groups.iter().filter(|g| is_ours(g)).count(), 1, "{event}");
        }
        assert!(!once.contains("mc-key-0123456789"));
        assert_eq!(applied(&once, &target()), once);
        assert!(ClaudeCode.plugged_in(open(Format::Json5, &once).unwrap().as_ref()));
        assert!(!ClaudeCode.plugged_in(open(Format::Json5, text).unwrap().as_ref()));

        // A moved binary replaces MetaClaw's entry in place.
        let mut moved = target();
        moved.plugin = Some(PluginHost {
            program: PathBuf::from("/usr/bin/metaclaw"),
            home: None,
            metaclaw_home: PathBuf::from("/home/u/.metaclaw"),
        });
        let again: Value = serde_json::from_str(&applied(&once, &moved)).unwrap();
        let stop = again["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2);
        assert_eq!(
            stop[1]["hooks"][0]["command"],
            "/usr/bin/metaclaw hook claude-code"
        );
    }

    #[test]
    fn without_the_command_nothing_is_planned() {
        let doc = open(Format::Json5, "{}").unwrap();
        let t = Target::local(30000, "k", "m");
        assert!(ClaudeCode.edits(doc.as_ref(), &t).is_err());
    }
}
