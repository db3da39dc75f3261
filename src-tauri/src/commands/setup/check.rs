//! Step 5: the connection test, before anything is written. Interactively a failure offers
//! another key, going on anyway, or stopping; non-interactively it is the end (exit 1).

use metaclaw_engine::config::Config;
use metaclaw_engine::providers::{self, Check, Report};
use metaclaw_engine::secrets::SecretStore;
use metaclaw_engine::setup::{self, Answers};
use tokio::runtime::Runtime;

use super::prompts::Prompter;
use crate::exit::Failure;
use crate::output;

/// Tests the answers' provider; the report, already printed.
pub fn test(
    runtime: &Runtime,
    answers: &Answers,
    config: &Config,
    store: &SecretStore,
) -> Result<Report, Failure> {
    let key_required = providers::find(&answers.provider).is_some_and(|p| p.key_required);
    // Outside the runtime: the keychain must not be driven from async code.
    let target = setup::connection_target(answers, config, store)?;
    let host = providers::host_of(&target.api_base).unwrap_or_default();
    output::line(format!("Testing the connection to {host}…"));
    let report = runtime.block_on(setup::test_connection(&target, key_required));
    output::line(format!("  {}", describe(&report, &answers.model)));
    Ok(report)
}

/// What the user settled on after the test.
pub enum Settled {
    /// Passed, or the user goes on without a passing test.
    Done,
    /// Back to the provider questions.
    Edit,
}

/// Tests until it passes or the user decides.
pub fn until_settled(
    runtime: &Runtime,
    prompter: &Prompter,
    answers: &mut Answers,
    config: &Config,
    store: &SecretStore,
    key_stored: bool,
) -> Result<Settled, Failure> {
    loop {
        if test(runtime, answers, config, store)?.ok {
            return Ok(Settled::Done);
        }
        let next = prompter.choice(
            "Enter another key (key), change the provider answers (edit), continue anyway (continue), or abort (abort)?",
            &["key", "edit", "continue", "abort"],
            Some("key"),
        )?;
        match next.as_str() {
            "continue" => return Ok(Settled::Done),
            "edit" => return Ok(Settled::Edit),
            "abort" => {
                return Err(Failure::error("setup aborted: nothing was written"));
            }
            _ => {
                // Blank keeps the stored key only while no other one was typed.
                let keep = (key_stored && answers.api_key.is_none()).then_some("stored");
                if let Some(key) = prompter.hidden("API key", keep)? {
                    answers.api_key = Some(key);
                }
            }
        }
    }
}

/// The outcome in words: what was checked and how long it took, or the plain-words error.
pub fn describe(report: &Report, model: &str) -> String {
    match (&report.connected, &report.error) {
        (Some(c), _) => {
            let how = match (c.checked, c.model_listed) {
                (Check::Models, Some(true)) => format!("model {model} is listed"),
                (Check::Models, _) => format!("{} models listed", c.models_total),
                (Check::Completion, _) => format!("model {model} answered"),
            };
            format!("ok: {how} ({} ms)", report.latency_ms)
        }
        (None, Some(e)) => format!("failed: {}", e.message),
        (None, None) => "failed".into(),
    }
}
