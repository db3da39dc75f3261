//! `openclaw` with MetaClaw as its context engine (`metaclaw agent connect openclaw
//! --plugin`): OpenClaw keeps talking to its own provider (OAuth and subscription logins
//! included) and loads MetaClaw's plugin, written under MetaClaw's home
//! (`<home>/integrations/openclaw`, see [`crate::packages`]). The config gains:
//!
//! - `plugins.load.paths`: the plugin's folder (a plain load path rather than `openclaw
//!   plugins install --link`, whose install record lives in OpenClaw's state database: this
//!   way every change is in the one file MetaClaw backs up and restores byte for byte);
//! - `plugins.entries.metaclaw`: enabled, with MetaClaw's home (the plugin finds the engine
//!   through its run files; nothing secret is written);
//! - `plugins.slots.contextEngine: "metaclaw"`;
//! - `plugins.allow` gains `metaclaw` when the user keeps an allowlist (never created: that
//!   would block their other plugins).
//!
//! OpenClaw's memory plugin (`plugins.slots.memory`) is left as it is: the engine keeps its
//! prompt section.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{paths, restart_command};
use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::packages::{self, OPENCLAW, Package};
use crate::target::{Endpoint, Mode, Protocol, Target};

pub struct OpenClawPlugin;

/// The plugin's id, as its manifest and engine registration say.
const ID: &str = "metaclaw";
const LOAD_PATHS: [&str; 3] = ["plugins", "load", "paths"];
const SLOT: [&str; 3] = ["plugins", "slots", "contextEngine"];
const ALLOW: [&str; 2] = ["plugins", "allow"];

/// The strings of the list at `path`: `Ok(None)` when there is none, `Err` when it is not a
/// list.
fn list(doc: &dyn Doc, path: &[&str]) -> Result<Option<Vec<Value>>, String> {
    match doc.get(path) {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(_) => Err(format!("`{}` is not a list", path.join("."))),
    }
}

/// Whether a load path is MetaClaw's OpenClaw package, wherever MetaClaw's home is.
fn is_ours(path: &Value) -> bool {
    path.as_str().is_some_and(|p| {
        p.trim_end_matches('/')
            .ends_with(&format!("integrations/{}", OPENCLAW.agent))
    })
}

impl Adapter for OpenClawPlugin {
    fn name(&self) -> &'static str {
        "openclaw"
    }

    /// What OpenClaw speaks to its own provider does not matter: MetaClaw is not in the way.
    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn mode(&self) -> Mode {
        Mode::Plugin
    }

    fn package(&self) -> Option<&'static Package> {
        Some(&OPENCLAW)
    }

    fn binary(&self) -> Option<&'static str> {
        Some("openclaw")
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(paths::config_file(env)))
    }

    fn format(&self) -> Format {
        Format::Json5
    }

    fn edits(&self, doc: &dyn Doc, target: &Target) -> Result<Vec<Edit>, String> {
        let host = target
            .plugin
            .as_ref()
            .ok_or("no MetaClaw home for the plugin to find the engine from")?;
        let dir = packages::dir(&host.metaclaw_home, &OPENCLAW);
        let dir = Value::String(dir.to_string_lossy().into_owned());
        if let Some(plugins) = doc.get(&["plugins"])
            && !plugins.is_object()
        {
            return Err("`plugins` is not an object".into());
        }
        // An older load path of ours (MetaClaw's home moved) is replaced where it is.
        let mut paths: Vec<Value> = list(doc, &LOAD_PATHS)?.unwrap_or_default();
        match paths.iter().position(is_ours) {
            Some(i) => paths[i] = dir.clone(),
            None => paths.push(dir.clone()),
        }
        let mut seen = false;
        paths.retain(|p| {
            let first = !(is_ours(p) && seen);
            seen |= is_ours(p);
            first
        });
        let mut edits = vec![
            Edit::set(&LOAD_PATHS, Value::Array(paths)),
            Edit::set(&["plugins", "entries", ID, "enabled"], json!(true)),
            Edit::set(
                &["plugins", "entries", ID, "config", "home"],
                json!(host.metaclaw_home.to_string_lossy()),
            ),
            Edit::set(&SLOT, json!(ID)),
        ];
        if let Some(mut allowed) = list(doc, &ALLOW)?
            && !allowed.iter().any(|a| a == ID)
        {
            allowed.push(json!(ID));
            edits.push(Edit::set(&ALLOW, Value::Array(allowed)));
        }
        Ok(edits)
    }

    /// No endpoint: OpenClaw's requests do not go through MetaClaw.
    fn read_back(&self, _doc: &dyn Doc) -> Option<Endpoint> {
        None
    }

    fn plugged_in(&self, doc: &dyn Doc) -> bool {
        doc.get(&SLOT).is_some_and(|s| s == ID)
            && doc
                .get(&["plugins", "entries", ID, "enabled"])
                .is_none_or(|e| e != json!(false))
            && list(doc, &LOAD_PATHS).is_ok_and(|p| p.is_some_and(|p| p.iter().any(is_ours)))
    }

    /// A gateway applies `plugins` changes by restarting itself (hybrid reload); with reload
    /// off, a gateway service is restarted.
    fn restart_command(&self, env: &Env) -> Option<Vec<String>> {
        restart_command(env)
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "As a plugin (`metaclaw agent connect openclaw --plugin`), OpenClaw keeps talking to its own provider (subscription logins included) and runs MetaClaw as its context engine: each prompt gets MetaClaw's context and each finished turn is sent to MetaClaw; with MetaClaw stopped, OpenClaw works as before.".into(),
        ]
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::doc::open;
    use crate::target::PluginHost;

    fn target(home: &str) -> Target {
        Target {
            plugin: Some(PluginHost {
                program: PathBuf::from("/usr/bin/metaclaw"),
                home: None,
                metaclaw_home: PathBuf::from(home),
            }),
            ..Target::local(30000, "mc-key-0123456789", "m")
        }
    }

    /// The value at `path` of a JSON5 text (`Null` when absent).
    fn at(text: &str, path: &[&str]) -> Value {
        open(Format::Json5, text)
            .unwrap()
            .get(path)
            .unwrap_or(Value::Null)
    }

    fn applied(text: &str, t: &Target) -> String {
        let doc = open(Format::Json5, text).unwrap();
        let mut after = open(Format::Json5, text).unwrap();
        for e in OpenClawPlugin.edits(doc.as_ref(), t).unwrap() {
            let p: Vec<&str> = e.path.iter().map(String::as_str).collect();
            after.set(&p, e.value.as_ref().unwrap()).unwrap();
        }
        after.render()
    }

    #[test]
    fn the_engine_is_loaded_selected_and_given_the_home_beside_the_users_plugins() {
        let user = r#"{
  // mine
  plugins: {
    load: { paths: ["/opt/my-plugin"] },
    allow: ["memory-core", "my-plugin"],
    slots: { memory: "memory-core" },
    entries: { "my-plugin": { enabled: true } },
  },
  models: { providers: { anthropic: { apiKey: "sk-ant-oat01-x" } } },
}"#;
        let once = applied(user, &target("/home/u/.metaclaw"));
        assert_eq!(
            at(&once, &["plugins", "load", "paths"]),
            json!(["/opt/my-plugin", "/home/u/.metaclaw/integrations/openclaw"])
        );
        assert_eq!(at(&once, &SLOT), "metaclaw");
        assert_eq!(at(&once, &["plugins", "slots", "memory"]), "memory-core");
        assert_eq!(
            at(&once, &["plugins", "entries", "metaclaw"]),
            json!({"enabled": true, "config": {"home": "/home/u/.metaclaw"}})
        );
        assert_eq!(
            at(&once, &["plugins", "entries", "my-plugin", "enabled"]),
            true
        );
        assert_eq!(
            at(&once, &ALLOW),
            json!(["memory-core", "my-plugin", "metaclaw"])
        );
        // The provider (and its login) is the user's, untouched; nothing of MetaClaw's key.
        assert_eq!(
            at(&once, &["models", "providers", "anthropic", "apiKey"]),
            "sk-ant-oat01-x"
        );
        assert!(!once.contains("mc-key") && once.contains("// mine"));
        assert!(OpenClawPlugin.plugged_in(open(Format::Json5, &once).unwrap().as_ref()));
        // Idempotent; a moved home replaces its load path instead of adding a second.
        assert_eq!(applied(&once, &target("/home/u/.metaclaw")), once);
        let moved = applied(&once, &target("/srv/mc"));
        assert_eq!(
            at(&moved, &LOAD_PATHS),
            json!(["/opt/my-plugin", "/srv/mc/integrations/openclaw"])
        );
    }

    #[test]
    fn no_allowlist_is_created_and_a_bare_config_gains_only_the_plugin() {
        let bare: Value = serde_json::from_str(&applied("{}", &target("/h/.metaclaw"))).unwrap();
        assert!(bare["plugins"].get("allow").is_none());
        assert_eq!(
            bare["plugins"]["load"]["paths"].as_array().unwrap().len(),
            1
        );
        assert_eq!(bare.as_object().unwrap().len(), 1);
    }

    #[test]
    fn a_config_it_cannot_edit_safely_is_refused() {
        for bad in [
            r#"{plugins: "x"}"#,
            r#"{plugins: {load: {paths: "/x"}}}"#,
            r#"{plugins: {allow: "metaclaw"}}"#,
        ] {
            let doc = open(Format::Json5, bad).unwrap();
            assert!(
                OpenClawPlugin.edits(doc.as_ref(), &target("/h")).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn plugged_in_only_while_selected_enabled_and_loaded() {
        let once = applied("{}", &target("/h/.metaclaw"));
        let mut doc = open(Format::Json5, &once).unwrap();
        assert!(OpenClawPlugin.plugged_in(doc.as_ref()));
        doc.set(&["plugins", "slots", "contextEngine"], &json!("legacy"))
            .unwrap();
        assert!(!OpenClawPlugin.plugged_in(doc.as_ref()));
        let mut doc = open(Format::Json5, &once).unwrap();
        doc.set(
            &["plugins", "entries", "metaclaw", "enabled"],
            &json!(false),
        )
        .unwrap();
        assert!(!OpenClawPlugin.plugged_in(doc.as_ref()));
    }
}
