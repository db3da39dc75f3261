//! Which agents to connect: the ones installed here, listed with where their config is.

use metaclaw_engine::agents::{self, Mode};
use metaclaw_engine::setup::Status;

use super::prompts::{Prompter, pick};
use crate::exit::Failure;
use crate::output;

/// The agents chosen, and which way each connects.
#[derive(Debug, Default, PartialEq)]
pub struct Chosen {
    /// Pointed at the proxy (the first is recorded as `claw_type`).
    pub proxied: Vec<String>,
    /// Running MetaClaw inside them, as their plugin.
    pub plugins: Vec<String>,
}

/// Asks which installed agents to connect; `default` are the ones chosen before. An agent
/// with a plugin is then asked which way it connects (one that has only a plugin, Claude
/// Code, connects that way).
pub fn ask(prompter: &Prompter, agents: &[Status], default: &[String]) -> Result<Chosen, Failure> {
    let installed: Vec<&Status> = agents
        .iter()
        .filter(|s| {
            s.installed
                && s.agent != "none"
                && (s.mode == Mode::Proxy || agents::has_plugin(&s.agent))
        })
        .collect();
    output::line("");
    if installed.is_empty() {
        let names: Vec<&str> = agents.iter().map(|s| s.agent.as_str()).collect();
        output::line(format!(
            "No agent found on this machine ({}); any OpenAI- or Anthropic-compatible client can still use MetaClaw.",
            names.join(", ")
        ));
        return Ok(Chosen::default());
    }
    output::line("Agents on this machine:");
    for (i, s) in installed.iter().enumerate() {
        output::line(format!("  {}) {:<10} {}", i + 1, s.agent, where_(s)));
    }
    output::line("  none: connect no agent");
    let names: Vec<&str> = installed.iter().map(|s| s.agent.as_str()).collect();
    let default = if default.is_empty() {
        "none".to_owned()
    } else {
        default.join(",")
    };
    loop {
        let answer = prompter.text(
            "Connect which agents? (numbers or names, comma-separated)",
            Some(&default),
        )?;
        match parse(&answer, &names) {
            Ok(names) => return ways(prompter, agents, names),
            Err(bad) => output::line(format!(
                "  `{bad}` is not one of: {}, none",
                names.join(", ")
            )),
        }
    }
}

/// Which way each chosen agent connects: asked for those that can go either way.
fn ways(prompter: &Prompter, agents: &[Status], names: Vec<String>) -> Result<Chosen, Failure> {
    let mut chosen = Chosen::default();
    for name in names {
        let plugin_only = matches!(agents::mode(&name), Ok(Mode::Plugin));
        let plugin = if plugin_only {
            true
        } else if agents::has_plugin(&name) {
            let now = agents
                .iter()
                .find(|s| s.agent == name)
                .is_some_and(|s| s.connected && s.mode == Mode::Plugin);
            output::line(format!(
                "  {name} can reach MetaClaw two ways:\n    proxy:  it sends its requests to MetaClaw, which adds what it learned and forwards them with your provider key;\n    plugin: MetaClaw runs inside {name}, which keeps its own provider and login (subscriptions included)."
            ));
            loop {
                let answer = prompter.text(
                    &format!("Connect {name} as (proxy or plugin)"),
                    Some(if now { "plugin" } else { "proxy" }),
                )?;
                match answer.trim().to_ascii_lowercase().as_str() {
                    "proxy" => break false,
                    "plugin" => break true,
                    other => output::line(format!("  `{other}` is neither proxy nor plugin")),
                }
            }
        } else {
            false
        };
        if plugin {
            chosen.plugins.push(name);
        } else {
            chosen.proxied.push(name);
        }
    }
    Ok(chosen)
}

/// `1,copaw` → the names; `none` → nothing; the first part that is not an option is the error.
pub fn parse(answer: &str, options: &[&str]) -> Result<Vec<String>, String> {
    let mut chosen: Vec<String> = Vec::new();
    for part in answer.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part.eq_ignore_ascii_case("none") {
            continue;
        }
        let name = pick(part, options).ok_or_else(|| part.to_owned())?;
        if !chosen.iter().any(|c| c == name) {
            chosen.push(name.to_owned());
        }
    }
    Ok(chosen)
}

/// Where the agent's config is, and whether MetaClaw already points it here.
fn where_(s: &Status) -> String {
    let mut text = match (&s.config, s.config_exists) {
        (Some(p), true) => format!("config: {}", p.display()),
        (Some(p), false) => format!("config: {} (not created yet)", p.display()),
        (None, _) => s
            .binary
            .as_ref()
            .map(|b| format!("program: {}", b.display()))
            .unwrap_or_default(),
    };
    if s.connected {
        text.push_str(" — connected to MetaClaw");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn agents_by_number_or_name() {
        let options = ["openclaw", "copaw"];
        assert_eq!(
            parse("2, openclaw", &options),
            Ok(vec!["copaw".into(), "openclaw".into()])
        );
        assert_eq!(parse("none", &options), Ok(Vec::new()));
        assert_eq!(parse("copaw,2", &options), Ok(vec!["copaw".into()]));
        assert_eq!(parse("3", &options), Err("3".into()));
    }
}
