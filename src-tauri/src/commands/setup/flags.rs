//! The answers the flags give, on top of the config as it is: final in `--non-interactive`,
//! the defaults shown otherwise.

use metaclaw_engine::config::{LlmApi, Mode};
use metaclaw_engine::providers;
use metaclaw_engine::secrets::Secret;
use metaclaw_engine::setup::{Answers, Current, SetupError, Status};

use crate::cli::SetupArgs;
use crate::exit::Failure;

/// `current` with every given flag applied. A new `--provider` brings its preset's base,
/// protocol and model unless those flags are given too.
pub fn overlay(current: &Current, args: &SetupArgs, agents: &[Status]) -> Result<Answers, Failure> {
    let mut a = current.answers.clone();
    if let Some(name) = &args.provider {
        let preset = providers::find(name).ok_or_else(|| {
            Failure::usage(format!(
                "--provider: unknown provider `{name}`; one of: {}",
                preset_names()
            ))
        })?;
        if preset.name != a.provider || !current.configured {
            a.provider = preset.name.to_owned();
            a.api = preset.api;
            a.api_base = preset.api_base.to_owned();
            a.model = preset.default_model.to_owned();
        }
    }
    if let Some(base) = &args.api_base {
        a.api_base = base.trim().to_owned();
    }
    if let Some(api) = &args.api {
        a.api = parse_api(api).ok_or_else(|| {
            Failure::usage(format!("--api: expected openai or anthropic, got `{api}`"))
        })?;
    }
    if let Some(model) = &args.model {
        a.model = model.trim().to_owned();
    }
    if let Some(mode) = &args.mode {
        a.mode = Mode::parse(mode.trim()).ok_or_else(|| {
            Failure::usage(format!(
                "--mode: unknown mode `{mode}` (expected one of: {})",
                Mode::NAMES.join(", ")
            ))
        })?;
    }
    if !args.agents.is_empty() {
        a.agents = chosen_agents(&args.agents, agents)?;
    } else {
        // The agent chosen before, while it is still installed.
        a.agents.retain(|n| installed(agents, n));
    }
    if let Some(var) = &args.api_key_env {
        a.api_key = Some(key_from_env(var)?);
    }
    if let Some(w) = &args.wechat {
        a.wechat = match w.trim().to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" => true,
            "off" | "false" | "no" | "0" => false,
            _ => {
                return Err(Failure::usage(format!(
                    "--wechat: expected on or off, got `{w}`"
                )));
            }
        };
    }
    settle_wechat(&mut a, args.wechat.is_some());
    Ok(a)
}

/// WeChat exists only for OpenClaw: an agent choice away from OpenClaw turns a WeChat the
/// config had on off, unless `--wechat` asked for it (which validation then refuses, saying why).
pub fn settle_wechat(a: &mut Answers, asked: bool) {
    if !asked && !a.agents.iter().any(|n| n == "openclaw") {
        a.wechat = false;
    }
}

/// `--agent` values: known, installed, no repeats; `none` alone means none.
fn chosen_agents(names: &[String], agents: &[Status]) -> Result<Vec<String>, Failure> {
    let mut chosen: Vec<String> = Vec::new();
    for name in names.iter().flat_map(|n| n.split(',')) {
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() || name == "none" || chosen.contains(&name) {
            continue;
        }
        if !agents.iter().any(|s| s.agent == name) {
            let known: Vec<&str> = agents.iter().map(|s| s.agent.as_str()).collect();
            return Err(Failure::usage(format!(
                "--agent: unknown agent `{name}`; one of: {}",
                known.join(", ")
            )));
        }
        if !installed(agents, &name) {
            return Err(Failure::usage(format!(
                "--agent: {name} is not installed here (neither its program on PATH nor its config)"
            )));
        }
        chosen.push(name);
    }
    Ok(chosen)
}

pub fn installed(agents: &[Status], name: &str) -> bool {
    agents.iter().any(|s| s.agent == name && s.installed)
}

/// The key from `--api-key-env VAR`: keys never go on the command line.
fn key_from_env(var: &str) -> Result<Secret, Failure> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(Secret::new(v.trim())),
        _ => Err(Failure::usage(format!(
            "--api-key-env: the environment variable {var} is not set (or is empty)"
        ))),
    }
}

pub fn parse_api(s: &str) -> Option<LlmApi> {
    match s.trim().to_ascii_lowercase().as_str() {
        "openai" => Some(LlmApi::Openai),
        "anthropic" => Some(LlmApi::Anthropic),
        _ => None,
    }
}

pub fn preset_names() -> String {
    let names: Vec<_> = providers::PRESETS.iter().map(|p| p.name).collect();
    names.join(", ")
}

/// An invalid answer in `--non-interactive`, as a usage error naming the flag to give.
pub fn usage_error(e: SetupError) -> Failure {
    match e {
        SetupError::Invalid { field, message } => {
            let flag = match field {
                "provider" => "--provider",
                "api_base" => "--api-base",
                "model" => "--model",
                "api_key" => "--api-key-env",
                "agents" => "--agent",
                other => other,
            };
            Failure::usage(format!("{flag}: {message}"))
        }
        other => Failure::error(other),
    }
}
