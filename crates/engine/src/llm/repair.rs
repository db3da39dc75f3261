//! A structured answer the tolerant parsers cannot use gets one repair request; a second
//! unusable answer is final.
//!
//! Models cut JSON short, use the wrong keys or answer in prose. Shown their answer and what
//! was wrong with it, they usually fix a shape they got almost right, so one more call is
//! worth its price. If that answer is unusable too, this model cannot do the job now: the
//! caller falls back (memory: the rules; skills: skipped with the reason) instead of asking
//! again for the same turns, which would cost the same and fail the same.

use std::fmt::Display;

use super::calls::Purpose;
use super::complete::{Completion, complete_for};
use super::endpoint::Endpoint;

/// Most characters of the unusable answer shown back to the model: enough to see its
/// shape, not a second copy of a long answer.
const ANSWER_EXCERPT: usize = 2_000;

/// Why no usable answer came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The call itself failed (network, timeout, an error status): worth trying again later.
    Call(String),
    /// The model answered twice, and neither answer was usable.
    Unusable(String),
}

/// Asks for `req` and reads the answer with `parse`; an unusable answer is sent back once
/// with the reason. Both calls are counted under `purpose`.
pub async fn complete_parsed<T, E: Display>(
    purpose: Purpose,
    http: &reqwest::Client,
    ep: &Endpoint,
    req: &Completion,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<T, Failure> {
    let call = |e: super::LlmError| Failure::Call(e.to_string());
    let answer = complete_for(purpose, http, ep, req).await.map_err(call)?;
    let first = match parse(&answer) {
        Ok(parsed) => return Ok(parsed),
        Err(e) => e.to_string(),
    };
    tracing::debug!(model = %ep.model, error = %first, "unusable answer; asking once for a repair");
    let again = Completion {
        user: repair_request(&req.user, &answer, &first),
        ..req.clone()
    };
    let answer = complete_for(purpose, http, ep, &again)
        .await
        .map_err(call)?;
    parse(&answer)
        .map_err(|e| Failure::Unusable(format!("{e} (the first answer: {first}; repaired once)")))
}

/// The original request, the unusable answer (cut to [`ANSWER_EXCERPT`]) and what was wrong.
fn repair_request(user: &str, answer: &str, error: &str) -> String {
    let shown: String = answer.chars().take(ANSWER_EXCERPT).collect();
    let cut = if shown.len() < answer.len() {
        "\n[… cut]"
    } else {
        ""
    };
    format!(
        "{user}\n\n---\nYour previous answer could not be used: {error}.\n\
         Your previous answer was:\n{shown}{cut}\n---\n\
         Answer again: only the JSON object the instructions ask for, complete, no prose."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repair_request_keeps_the_task_and_shows_the_answer_and_the_reason() {
        let r = repair_request(
            "Extract memories from: I prefer tabs.",
            "Sure! Tabs.",
            "no JSON",
        );
        assert!(r.starts_with("Extract memories from: I prefer tabs."));
        assert!(r.contains("could not be used: no JSON."));
        assert!(r.contains("Your previous answer was:\nSure! Tabs.\n---"));
        assert!(!r.contains("[… cut]"));
    }

    #[test]
    fn a_long_answer_is_shown_cut_on_a_character_boundary() {
        let answer = "é".repeat(ANSWER_EXCERPT + 10);
        let r = repair_request("task", &answer, "truncated JSON");
        assert!(r.contains(&"é".repeat(ANSWER_EXCERPT)));
        assert!(!r.contains(&"é".repeat(ANSWER_EXCERPT + 1)));
        assert!(r.contains("[… cut]"));
    }
}
