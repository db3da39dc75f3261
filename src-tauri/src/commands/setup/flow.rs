//! The interactive questions, in order: agents, provider, base URL, protocol, model, key,
//! (connection test) and mode. Each shows the current value; blank keeps it.

use metaclaw_engine::config::{LlmApi, Mode};
use metaclaw_engine::providers::{self, PRESETS, Preset};
use metaclaw_engine::setup::Answers;

use super::prompts::Prompter;
use crate::exit::Failure;
use crate::output;

/// The provider questions (step 3): provider, base URL, protocol for custom, model.
pub fn ask_provider(prompter: &Prompter, defaults: &Answers) -> Result<Answers, Failure> {
    let mut a = defaults.clone();
    output::line("");
    output::line("LLM provider:");
    for (i, p) in PRESETS.iter().enumerate() {
        output::line(format!(
            "  {}) {:<11} {:<42} {}",
            i + 1,
            p.name,
            p.label,
            p.api_base
        ));
    }
    let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    let current = (!defaults.api_base.is_empty()).then_some(defaults.provider.as_str());
    let name = prompter.choice("Provider (number or name)", &names, current)?;
    let preset = providers::find(&name).ok_or_else(|| Failure::error("unknown provider"))?;
    let same = current == Some(preset.name);
    a.provider = preset.name.to_owned();

    a.api_base = ask_base(prompter, preset, same.then_some(defaults.api_base.as_str()))?;
    a.api = if preset.name == "custom" {
        let current = if same { defaults.api } else { preset.api };
        let api = prompter.choice(
            "Protocol (openai or anthropic)",
            &["openai", "anthropic"],
            Some(api_name(current)),
        )?;
        if api == "anthropic" {
            LlmApi::Anthropic
        } else {
            LlmApi::Openai
        }
    } else {
        preset.api
    };
    let model_default = if same && !defaults.model.is_empty() {
        defaults.model.as_str()
    } else {
        preset.default_model
    };
    a.model = prompter.text("Model", Some(model_default))?;
    Ok(a)
}

/// The base URL: required for `custom`, the preset's (editable) otherwise.
fn ask_base(
    prompter: &Prompter,
    preset: &Preset,
    current: Option<&str>,
) -> Result<String, Failure> {
    let default = current.filter(|c| !c.is_empty()).unwrap_or(preset.api_base);
    loop {
        let base = prompter.text("Base URL", Some(default))?;
        if providers::host_of(&base).is_some() {
            return Ok(base);
        }
        output::line("  a base URL starts with http:// or https://");
    }
}

/// Step 6.
pub fn ask_mode(prompter: &Prompter, current: Mode) -> Result<Mode, Failure> {
    output::line("");
    output::line("Mode:");
    output::line("  1) skills_only  proxy + skills + memory (recommended; no GPU or RL account)");
    output::line(
        "  2) rl           also learns weights from your sessions (needs an RL backend key)",
    );
    output::line("  3) madmax       rl, training only in idle/sleep windows (auto is an alias)");
    let options = ["skills_only", "rl", "madmax", "auto"];
    let picked = prompter.choice("Mode", &options, Some(&current.to_string()))?;
    Mode::parse(&picked).ok_or_else(|| Failure::error("unknown mode"))
}

pub fn api_name(api: LlmApi) -> &'static str {
    match api {
        LlmApi::Openai => "openai",
        LlmApi::Anthropic => "anthropic",
    }
}
