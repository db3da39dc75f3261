//! Writing the answers: each key through `config::set` (validated, atomic, 0600), so keys the
//! user wrote and settings setup does not ask about stay; all or nothing.

use super::snapshot::Snapshot;
use super::{Answers, SetupError, validate};
use crate::config::{self, ClawType, SetOutcome};
use crate::paths::Paths;
use crate::secrets::SecretStore;
use crate::wiring::LLM_KEY;

/// What was written, one line each when displayed (the key shown only as where it went).
#[derive(Debug, Clone)]
pub struct Applied {
    pub written: Vec<SetOutcome>,
    /// `None` when the stored key was kept.
    pub key: Option<SetOutcome>,
}

/// Writes the answers. On any failure the config file is put back as it was.
/// Blocking: the key goes to the keychain.
pub fn apply(paths: &Paths, store: &SecretStore, answers: &Answers) -> Result<Applied, SetupError> {
    validate(answers)?;
    let snapshot = Snapshot::take(&paths.config)?;
    let result = write(paths, store, answers);
    if result.is_err() {
        snapshot.restore();
    }
    result
}

fn write(paths: &Paths, store: &SecretStore, answers: &Answers) -> Result<Applied, SetupError> {
    let api = match answers.api {
        config::LlmApi::Openai => "openai",
        config::LlmApi::Anthropic => "anthropic",
    };
    // With WeChat on, OpenClaw is the agent recorded (the channel is OpenClaw's).
    let claw_type = if answers.wechat {
        ClawType::Openclaw.name()
    } else {
        answers
            .agents
            .first()
            .map_or(ClawType::None.name(), String::as_str)
    };
    let mode = answers.mode.to_string();
    let settings = [
        ("llm.provider", answers.provider.trim()),
        ("llm.api", api),
        ("llm.api_base", answers.api_base.trim()),
        ("llm.model_id", answers.model.trim()),
        ("mode", mode.as_str()),
        ("claw_type", claw_type),
        (
            "wechat.enabled",
            if answers.wechat { "true" } else { "false" },
        ),
    ];
    let mut written = Vec::with_capacity(settings.len());
    for (key, value) in settings {
        written.push(config::set(paths, key, value, store)?);
    }
    // Last, so a refused key leaves nothing half-written (the file is restored).
    let key = match &answers.api_key {
        Some(k) => Some(config::set(paths, LLM_KEY, k.expose().trim(), store)?),
        None => None,
    };
    Ok(Applied { written, key })
}
