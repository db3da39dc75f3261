//! The `weights:` line of `metaclaw status`, from `GET /api/learning`.

use serde_json::Value;

/// "rl · tinker · ready · serving step_000003 · step 3 · 5 samples waiting (2 unjudged)",
/// "off" when the mode does not train weights, `None` for an answer without a state.
pub fn line(learning: &Value) -> Option<String> {
    if !learning["active"].as_bool().unwrap_or(false) {
        return learning["state"].as_str().map(|_| "off".to_owned());
    }
    let text = |key: &str| learning[key].as_str().filter(|s| !s.is_empty());
    let count = |pointer: &str| learning.pointer(pointer).and_then(Value::as_u64);
    let mut parts: Vec<String> = [text("mode"), text("backend"), text("state")]
        .into_iter()
        .flatten()
        .map(str::to_owned)
        .collect();
    if let Some(serving) = text("serving") {
        parts.push(format!("serving {}", short_path(serving)));
    }
    parts.push(format!("step {}", learning["step"].as_i64().unwrap_or(0)));
    let waiting = count("/samples/waiting").unwrap_or(0);
    let mut samples = format!("{waiting} samples waiting");
    if let Some(unjudged) = count("/samples/unjudged").filter(|n| *n > 0) {
        samples.push_str(&format!(" ({unjudged} unjudged)"));
    }
    parts.push(samples);
    if let Some(fallback) = count("/served/fallback").filter(|n| *n > 0) {
        parts.push(format!(
            "{fallback} turns answered by the upstream LLM instead"
        ));
    }
    if let Some(error) = text("last_error") {
        parts.push(format!("last error: {error}"));
    }
    Some(parts.join(" · "))
}

/// The last part of a weights path (`tinker://run/sampler_weights/step_000003` →
/// `step_000003`); "base model" stays as it is.
fn short_path(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_ready_learner_says_what_serves_and_what_waits() {
        let v = json!({
            "mode": "rl", "active": true, "backend": "tinker", "state": "ready",
            "serving": "tinker://run-1/sampler_weights/step_000003", "step": 3,
            "samples": {"waiting": 5, "unjudged": 2, "held": 0, "consumed": 8, "dropped": 0},
            "served": {"sampled": 9, "fallback": 0}, "last_error": null
        });
        assert_eq!(
            line(&v).as_deref(),
            Some(
                "rl · tinker · ready · serving step_000003 · step 3 · 5 samples waiting (2 unjudged)"
            )
        );
    }

    #[test]
    fn an_unavailable_backend_says_why() {
        let v = json!({
            "mode": "madmax", "active": true, "backend": "tinker", "state": "unavailable",
            "serving": null, "step": 0,
            "samples": {"waiting": 0, "unjudged": 0},
            "served": {"sampled": 0, "fallback": 4},
            "last_error": "Tinker at http://127.0.0.1:9: connection refused"
        });
        assert_eq!(
            line(&v).as_deref(),
            Some(
                "madmax · tinker · unavailable · step 0 · 0 samples waiting · 4 turns answered by the upstream LLM instead · last error: Tinker at http://127.0.0.1:9: connection refused"
            )
        );
    }

    #[test]
    fn off_when_the_mode_does_not_train_weights() {
        let v = json!({"mode": "skills_only", "active": false, "state": "off", "step": 7});
        assert_eq!(line(&v).as_deref(), Some("off"));
        assert_eq!(line(&json!({})), None);
        assert_eq!(short_path("base model"), "base model");
        assert_eq!(short_path("a/b/"), "b");
    }
}
