//! On-policy distillation's teacher: an OpenAI-compatible `/v1/completions` endpoint asked
//! to score (not generate) the student's exact token ids, so no text is re-tokenised.
//!
//! The request sends `prompt` as token ids with `echo: true, logprobs: 1, max_tokens: 0`;
//! the reply's `token_logprobs` has one entry per prompt token (the first is `null`). The
//! last R entries are the teacher's logprobs of the R sampled tokens. This assumes the
//! teacher shares the student's tokenizer (the same model family), as the token ids are
//! only meaningful then.

use std::time::Duration;

use serde_json::{Value, json};

use crate::error::LearnError;
use crate::rl::grader_http::GraderHttp;
use crate::rl::observe::CallObserver;
use crate::rl::samples::SampleStore;

#[derive(Debug, Clone)]
pub struct TeacherConfig {
    /// OpenAI-compatible base URL including `/v1` (`opd.teacher_url`).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Retries after a transient failure (network, 5xx, 429).
    pub max_retries: u32,
    pub retry_delay: Duration,
    pub request_timeout: Duration,
    /// Told of every call, for learning's costs.
    pub on_call: Option<CallObserver>,
}

impl Default for TeacherConfig {
    fn default() -> Self {
        Self {
            base_url: String::new(),
            model: String::new(),
            api_key: None,
            max_retries: 3,
            retry_delay: Duration::from_millis(500),
            request_timeout: Duration::from_secs(120),
            on_call: None,
        }
    }
}

/// What one [`Teacher::score_pending`] pass did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TeacherReport {
    pub scored: u64,
    pub failed: u64,
    pub last_error: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Teacher {
    config: TeacherConfig,
    http: GraderHttp,
}

impl Teacher {
    pub fn new(config: TeacherConfig) -> Result<Self, LearnError> {
        let http = GraderHttp::new("the distillation teacher", config.request_timeout)?;
        Ok(Self { config, http })
    }

    /// The teacher's logprob of each completion token given everything before it. A
    /// position the teacher left `null` gets the student's own logprob (no KL signal)
    /// rather than 0, which would read as certainty.
    pub async fn logprobs(
        &self,
        prompt: &[u32],
        completion: &[u32],
        student_logprobs: &[f32],
    ) -> Result<Vec<f32>, LearnError> {
        let all: Vec<u32> = prompt.iter().chain(completion).copied().collect();
        let reply = self.request(&all).await?;
        let lps = reply["choices"][0]["logprobs"]["token_logprobs"]
            .as_array()
            .ok_or_else(|| {
                self.http
                    .error("the reply has no token_logprobs".to_owned(), false)
            })?;
        if lps.len() != all.len() {
            return Err(self.http.error(
                format!(
                    "{} logprobs for {} prompt tokens; the teacher must echo the prompt",
                    lps.len(),
                    all.len()
                ),
                false,
            ));
        }
        Ok(lps[prompt.len()..]
            .iter()
            .zip(student_logprobs)
            .map(|(t, s)| t.as_f64().map_or(*s, |t| t as f32))
            .collect())
    }

    /// Scores every waiting sample that has no teacher logprobs yet. A failure leaves the
    /// sample without them (it still trains, without the KL term) and is reported.
    pub async fn score_pending(
        &self,
        samples: &SampleStore,
        limit: u32,
    ) -> Result<TeacherReport, LearnError> {
        let due = samples.with(|s| s.samples_without_teacher(limit))?;
        let mut report = TeacherReport::default();
        for row in due {
            match self
                .logprobs(
                    &row.prompt_tokens,
                    &row.completion_tokens,
                    &row.completion_logprobs,
                )
                .await
            {
                Ok(lps) => {
                    samples.with(|s| s.set_sample_teacher_logprobs(row.id, &lps))?;
                    report.scored += 1;
                }
                Err(e) => {
                    tracing::warn!(sample = row.id, error = %e, "teacher logprobs failed");
                    report.failed += 1;
                    report.last_error = Some(e.to_string());
                }
            }
        }
        Ok(report)
    }

    async fn request(&self, tokens: &[u32]) -> Result<Value, LearnError> {
        let mut attempt = 0;
        loop {
            let answer = self.request_once(tokens).await;
            CallObserver::call(&self.config.on_call, answer.as_ref().ok());
            match answer {
                Err(e) if e.is_transient() && attempt < self.config.max_retries => {
                    let wait = self.config.retry_delay.saturating_mul(1 << attempt.min(16));
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn request_once(&self, tokens: &[u32]) -> Result<Value, LearnError> {
        let body = json!({
            "model": self.config.model,
            "prompt": tokens,
            "echo": true,
            "logprobs": 1,
            "max_tokens": 0,
        });
        let key = self.config.api_key.as_deref();
        self.http
            .post(&self.config.base_url, "/completions", key, &body)
            .await
    }
}
