//! `hermes` with MetaClaw as its memory provider (`metaclaw agent connect hermes --plugin`):
//! Hermes keeps talking to its own provider and asks MetaClaw, through the provider plugin
//! `integrations/hermes/metaclaw` (written under MetaClaw's home), for each turn's context and
//! hands it each turn. Hermes finds user plugins only in `$HERMES_HOME/plugins/`, so connect
//! links `$HERMES_HOME/plugins/metaclaw` to the package (disconnect removes the link) and
//! selects it in `config.yaml` with `memory.provider: metaclaw`, as `hermes config set` does.
//! Hermes has one memory provider at a time: a provider the user had selected is put back on
//! disconnect with the rest of the file.

use std::path::PathBuf;

use serde_json::json;

use super::{hermes_home, restart_command};
use crate::adapter::{Adapter, Edit};
use crate::doc::{Doc, Format};
use crate::env::Env;
use crate::error::ClawError;
use crate::packages::{HERMES, Package};
use crate::target::{Endpoint, Mode, Protocol, Target};

pub struct HermesPlugin;

const NAME: &str = "metaclaw";
const PROVIDER: [&str; 2] = ["memory", "provider"];

impl Adapter for HermesPlugin {
    fn name(&self) -> &'static str {
        "hermes"
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }

    fn mode(&self) -> Mode {
        Mode::Plugin
    }

    fn package(&self) -> Option<&'static Package> {
        Some(&HERMES)
    }

    fn package_link(&self, env: &Env) -> Option<(PathBuf, &'static str)> {
        Some((hermes_home(env).join("plugins").join(NAME), NAME))
    }

    fn binary(&self) -> Option<&'static str> {
        Some("hermes")
    }

    fn config_file(&self, env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(hermes_home(env).join("config.yaml")))
    }

    fn format(&self) -> Format {
        Format::Yaml
    }

    fn edits(&self, doc: &dyn Doc, _target: &Target) -> Result<Vec<Edit>, String> {
        if let Some(memory) = doc.get(&["memory"])
            && !memory.is_object()
            && !memory.is_null()
        {
            return Err("`memory` is not a mapping".into());
        }
        Ok(vec![Edit::set(&PROVIDER, json!(NAME))])
    }

    /// No endpoint: Hermes' requests do not go through MetaClaw.
    fn read_back(&self, _doc: &dyn Doc) -> Option<Endpoint> {
        None
    }

    fn plugged_in(&self, doc: &dyn Doc) -> bool {
        doc.get(&PROVIDER).is_some_and(|p| p == NAME)
    }

    fn restart_command(&self, env: &Env) -> Option<Vec<String>> {
        restart_command(env)
    }

    fn notes(&self) -> Vec<String> {
        vec![
            "As a plugin (`metaclaw agent connect hermes --plugin`), Hermes keeps talking to its own provider and uses MetaClaw as its memory provider (`memory.provider: metaclaw`): each turn gets MetaClaw's context and is sent to MetaClaw; with MetaClaw stopped, Hermes works as before. Chats started before connecting keep their old memory provider.".into(),
        ]
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::doc::open;

    #[test]
    fn the_memory_provider_is_selected_and_nothing_else_changes() {
        let user = "# mine\nmodel:\n  default: gpt-5\nmemory:\n  provider: honcho\n  memory_enabled: true\n";
        let doc = open(Format::Yaml, user).unwrap();
        let t = Target::local(30000, "mc-key-0123456789", "m");
        let edits = HermesPlugin.edits(doc.as_ref(), &t).unwrap();
        let mut after = open(Format::Yaml, user).unwrap();
        for e in &edits {
            let p: Vec<&str> = e.path.iter().map(String::as_str).collect();
            after.set(&p, e.value.as_ref().unwrap()).unwrap();
        }
        let text = after.render();
        assert!(
            text.contains("# mine") && text.contains("memory_enabled: true"),
            "{text}"
        );
        assert!(
            !text.contains("mc-key") && !text.contains("honcho"),
            "{text}"
        );
        assert!(HermesPlugin.plugged_in(after.as_ref()));
        assert!(!HermesPlugin.plugged_in(doc.as_ref()));
        let bad = open(Format::Yaml, "memory: off\n").unwrap();
        assert!(HermesPlugin.edits(bad.as_ref(), &t).is_err());
    }
}
