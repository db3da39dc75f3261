//! Which agents to connect: the ones installed here, listed with where their config is.

use metaclaw_engine::agents::Mode;
use metaclaw_engine::setup::Status;

use super::prompts::{Prompter, pick};
use crate::exit::Failure;
use crate::output;

/// Asks which installed agents to connect; `default` are the ones chosen before. Agents
/// that run MetaClaw as a plugin are connected with `agent connect NAME --plugin` instead.
pub fn ask(
    prompter: &Prompter,
    agents: &[Status],
    default: &[String],
) -> Result<Vec<String>, Failure> {
    let installed: Vec<&Status> = agents
        .iter()
        .filter(|s| s.installed && s.agent != "none" && s.mode == Mode::Proxy)
        .collect();
    output::line("");
    if installed.is_empty() {
        let names: Vec<&str> = agents.iter().map(|s| s.agent.as_str()).collect();
        output::line(format!(
            "No agent found on this machine ({}); any OpenAI- or Anthropic-compatible client can still use MetaClaw.",
            names.join(", ")
        ));
        return Ok(Vec::new());
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
            Ok(chosen) => return Ok(chosen),
            Err(bad) => output::line(format!(
                "  `{bad}` is not one of: {}, none",
                names.join(", ")
            )),
        }
    }
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
