//! `metaclaw train-step [--json]`: one weight-training step now, through the running engine
//! (`POST /v1/admin/train_step`). The tray's Train now says the outcome in the same words.

use std::time::Duration;

use metaclaw_engine::paths::Paths;
use serde_json::Value;

use crate::admin_client::AdminClient;
use crate::exit::{Failure, Outcome};
use crate::output;

const TRAIN_STEP: &str = "/v1/admin/train_step";

/// A step judges what is due first and talks to a remote backend: minutes, not seconds.
const STEP_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// What a train-step request came to.
#[derive(Debug, Clone, PartialEq)]
pub struct StepAnswer {
    /// Ok, skipped or stopped: nothing went wrong.
    pub ok: bool,
    pub words: String,
    /// The engine's answer as it came (printed by `--json`).
    pub body: Value,
}

pub fn run(paths: &Paths, as_json: bool) -> Outcome {
    let client = AdminClient::connect(paths)?;
    let runtime = crate::admin_client::runtime()?;
    let answer = runtime.block_on(request(&client))?;
    if as_json {
        output::line(&answer.body);
    } else if answer.ok {
        output::line(&answer.words);
    }
    if answer.ok {
        Ok(())
    } else {
        Err(Failure::error(answer.words))
    }
}

/// Asks the engine for one step now; `Err` only when it did not answer.
pub async fn request(client: &AdminClient) -> Result<StepAnswer, Failure> {
    let (status, body) = client.post_answer(TRAIN_STEP, STEP_TIMEOUT).await?;
    Ok(interpret(status, body))
}

/// The answer in words: the report's status for 200 and 500 (whose body is a report too),
/// the engine's error message otherwise (503: weight learning is off in this mode).
pub fn interpret(status: u16, body: Value) -> StepAnswer {
    let text = |key: &str| body[key].as_str().unwrap_or_default().to_owned();
    let report_status = if status == 200 || status == 500 {
        body["status"].as_str()
    } else {
        None
    };
    let (ok, words) = match report_status {
        Some("ok") => (true, done(&body)),
        Some("skipped") => (true, format!("Nothing to train: {}", text("message"))),
        Some("stopped") => (
            true,
            format!(
                "Step stopped: {} ({} samples)",
                text("message"),
                body["samples"].as_u64().unwrap_or(0)
            ),
        ),
        Some("error") => (false, format!("Training step failed: {}", text("message"))),
        _ => {
            let message = body
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("unexpected answer");
            (false, format!("Training step not run: {message}"))
        }
    };
    StepAnswer { ok, words, body }
}

/// "Step 3 done: 4 samples, mean reward 0.50, loss 1.23".
fn done(report: &Value) -> String {
    let mut words = format!(
        "Step {} done: {} samples",
        report["step"].as_i64().unwrap_or(0),
        report["samples"].as_u64().unwrap_or(0)
    );
    if let Some(r) = report["mean_reward"].as_f64() {
        words.push_str(&format!(", mean reward {r:.2}"));
    }
    if let Some(l) = report["loss"].as_f64() {
        words.push_str(&format!(", loss {l:.2}"));
    }
    words
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_finished_step_reads_as_its_numbers() {
        let a = interpret(
            200,
            json!({"status": "ok", "step": 3, "samples": 4, "mean_reward": 0.5, "loss": 1.234}),
        );
        assert!(a.ok);
        assert_eq!(
            a.words,
            "Step 3 done: 4 samples, mean reward 0.50, loss 1.23"
        );
        let no_loss = interpret(
            200,
            json!({"status": "ok", "step": 1, "samples": 2, "mean_reward": -0.25}),
        );
        assert_eq!(no_loss.words, "Step 1 done: 2 samples, mean reward -0.25");
    }

    #[test]
    fn skipped_and_stopped_are_not_failures() {
        let skipped = interpret(
            200,
            json!({"status": "skipped", "samples": 0, "message": "0 judged sample(s) waiting; a step needs 1"}),
        );
        assert!(skipped.ok);
        assert_eq!(
            skipped.words,
            "Nothing to train: 0 judged sample(s) waiting; a step needs 1"
        );
        let stopped = interpret(
            200,
            json!({"status": "stopped", "samples": 2, "message": "the training window closed; the batch is kept"}),
        );
        assert!(stopped.ok);
        assert_eq!(
            stopped.words,
            "Step stopped: the training window closed; the batch is kept (2 samples)"
        );
    }

    #[test]
    fn errors_and_refusals_say_why() {
        let failed = interpret(
            500,
            json!({"status": "error", "samples": 0, "message": "the training backend is not connected"}),
        );
        assert!(!failed.ok);
        assert_eq!(
            failed.words,
            "Training step failed: the training backend is not connected"
        );
        let off = interpret(
            503,
            json!({"error": {"message": "weight learning is off in mode skills_only"}}),
        );
        assert!(!off.ok);
        assert_eq!(
            off.words,
            "Training step not run: weight learning is off in mode skills_only"
        );
        // A 503 body that happens to look like a report is still a refusal.
        assert!(!interpret(503, json!({"status": "ok"})).ok);
        assert!(!interpret(404, json!({})).ok);
    }
}
