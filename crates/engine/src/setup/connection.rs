//! "Test connection" for setup's answers, before anything is written.

use super::{Answers, SetupError};
use crate::config::Config;
use crate::providers::{
    self, ErrorKind, PROBE_TIMEOUT, ProbeError, Report, Target, attribution_headers, same_base,
};
use crate::secrets::SecretStore;
use crate::wiring::LLM_KEY;

/// What the test sends: the new key, else the stored one — but only to the base URL it was
/// stored for, so the main key never reaches another host. Blocking: reads the keychain.
pub fn connection_target(
    answers: &Answers,
    config: &Config,
    store: &SecretStore,
) -> Result<Target, SetupError> {
    let configured = same_base(&answers.api_base, &config.llm.api_base);
    let api_key = match &answers.api_key {
        Some(k) => Some(k.clone()),
        None if configured => store.get(LLM_KEY)?,
        None => None,
    }
    .filter(|k| !k.expose().trim().is_empty());
    // `llm.extra_headers` belong to the configured host only.
    let mut extra_headers: Vec<(String, String)> = if configured {
        config.llm.extra_headers.clone().into_iter().collect()
    } else {
        Vec::new()
    };
    for (name, value) in attribution_headers(&answers.api_base, &config.openrouter) {
        if !extra_headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case(&name))
        {
            extra_headers.push((name, value));
        }
    }
    Ok(Target {
        key_check: providers::key_check_path(&answers.api_base),
        api_base: answers.api_base.trim().to_owned(),
        api: answers.api,
        model: answers.model.trim().to_owned(),
        api_key,
        extra_headers,
        timeout: PROBE_TIMEOUT,
    })
}

/// Runs the test; a provider that needs a key and has none fails without a request.
pub async fn test_connection(target: &Target, key_required: bool) -> Report {
    if key_required && target.api_key.is_none() {
        return failed(
            ErrorKind::Auth,
            "no API key given: this provider needs one".into(),
        );
    }
    let http = match reqwest::Client::builder()
        // A redirect could carry the key to another host.
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(PROBE_TIMEOUT)
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            return failed(
                ErrorKind::Other,
                format!("cannot build an HTTP client: {e}"),
            );
        }
    };
    providers::test_connection(&http, target).await
}

fn failed(kind: ErrorKind, message: String) -> Report {
    Report {
        ok: false,
        latency_ms: 0,
        connected: None,
        error: Some(ProbeError {
            kind,
            message,
            status: None,
        }),
    }
}
