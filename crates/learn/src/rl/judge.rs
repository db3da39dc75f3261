//! The process reward model: an OpenAI-compatible chat model scores each sampled turn
//! +1 / -1 / 0 with the turn that followed as evidence, `m` votes, majority.
//!
//! A vote whose reply has no readable score abstains. A vote whose request fails (after
//! the retries for transient errors) fails the sample's judgement: the sample is held with
//! the error and retried later, never scored on a partial vote and never lost.

use std::time::Duration;

use futures_util::future::join_all;
use metaclaw_store::SampleRow;
use serde_json::{Value, json};

use crate::error::LearnError;
use crate::rl::grader_http::GraderHttp;
use crate::rl::observe::CallObserver;
use crate::rl::samples::SampleStore;
use crate::rl::verdict::{majority, parse_score, sanitize};

const SYSTEM_PROMPT: &str = "You review answers given by an AI assistant in a conversation. \
Judge the RESPONSE to the INSTRUCTION on instruction alignment and task completion. The \
FOLLOW-UP is what the user or a tool said next: use it as evidence of whether the response \
worked (a correction, a complaint or a failing tool suggests it did not; moving on suggests it \
did). Decide whether the response was helpful (+1), unhelpful (-1) or unclear (0). Explain \
briefly, then end with exactly one line: `Score: 1`, `Score: -1` or `Score: 0`.";

#[derive(Debug, Clone)]
pub struct JudgeConfig {
    /// OpenAI-compatible base URL including `/v1` (`rl.prm_url`).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Votes per sample (`rl.prm_m`).
    pub votes: u32,
    pub temperature: f32,
    pub max_tokens: u32,
    /// Retries of one vote after a transient failure (network, 5xx, 429).
    pub max_retries: u32,
    /// First back-off between retries; doubles each retry.
    pub retry_delay: Duration,
    /// First wait before a held sample is judged again; doubles per failed attempt, up to
    /// `max_hold`.
    pub hold_delay: Duration,
    pub max_hold: Duration,
    pub request_timeout: Duration,
    /// Told of every call, for learning's costs.
    pub on_call: Option<CallObserver>,
}

impl Default for JudgeConfig {
    fn default() -> Self {
        Self {
            base_url: "https://api.openai.com/v1".to_owned(),
            model: "gpt-5.2".to_owned(),
            api_key: None,
            votes: 3,
            temperature: 0.6,
            max_tokens: 1024,
            max_retries: 3,
            retry_delay: Duration::from_millis(500),
            hold_delay: Duration::from_secs(30),
            max_hold: Duration::from_secs(3600),
            request_timeout: Duration::from_secs(120),
            on_call: None,
        }
    }
}

/// A sample's judgement.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub reward: f64,
    pub votes: Vec<Option<i8>>,
}

/// What one [`Judge::judge_pending`] pass did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeReport {
    pub scored: u64,
    pub held: u64,
    /// The last error of a held sample.
    pub last_error: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Judge {
    config: JudgeConfig,
    http: GraderHttp,
}

impl Judge {
    pub fn new(config: JudgeConfig) -> Result<Self, LearnError> {
        let http = GraderHttp::new("the judge", config.request_timeout)?;
        Ok(Self { config, http })
    }

    /// The chat messages one vote sends.
    /// An empty `follow_up` means the conversation ended after the response.
    pub fn messages(instruction: &str, response: &str, follow_up: &str) -> Value {
        let follow_up = if follow_up.is_empty() {
            "(none: the conversation ended after this response)".to_owned()
        } else {
            sanitize(follow_up)
        };
        let user = format!(
            "INSTRUCTION:\n{}\n\nRESPONSE:\n{}\n\nFOLLOW-UP:\n{}",
            sanitize(instruction),
            sanitize(response),
            follow_up
        );
        json!([
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ])
    }

    /// Judges one turn: `votes` concurrent votes, majority.
    pub async fn score(
        &self,
        instruction: &str,
        response: &str,
        follow_up: &str,
    ) -> Result<Verdict, LearnError> {
        let messages = Self::messages(instruction, response, follow_up);
        let votes = (0..self.config.votes.max(1)).map(|_| self.vote(&messages));
        let votes = join_all(votes)
            .await
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Verdict {
            reward: majority(&votes),
            votes,
        })
    }

    /// Judges every sample that is due (evidence seen, not scored, hold expired), oldest
    /// first, persisting each score or hold as it is known.
    pub async fn judge_pending(
        &self,
        samples: &SampleStore,
        now_ms: i64,
        limit: u32,
    ) -> Result<JudgeReport, LearnError> {
        let due = samples.with(|s| s.samples_to_judge(now_ms, limit))?;
        let mut report = JudgeReport::default();
        for sample in due {
            self.judge_one(samples, &sample, now_ms, &mut report)
                .await?;
        }
        Ok(report)
    }

    async fn judge_one(
        &self,
        samples: &SampleStore,
        sample: &SampleRow,
        now_ms: i64,
        report: &mut JudgeReport,
    ) -> Result<(), LearnError> {
        let follow_up = sample.next_state.as_deref().unwrap_or_default();
        match self
            .score(&sample.instruction, &sample.response_text, follow_up)
            .await
        {
            Ok(v) => {
                samples.with(|s| s.set_sample_score(sample.id, v.reward, &v.votes))?;
                report.scored += 1;
            }
            Err(e) => {
                let error = e.to_string();
                let attempts = match &sample.judge {
                    metaclaw_store::JudgeState::Held { attempts, .. } => *attempts,
                    _ => 0,
                };
                let wait = self
                    .config
                    .hold_delay
                    .saturating_mul(1u32 << attempts.min(16))
                    .min(self.config.max_hold);
                let retry_at = now_ms.saturating_add(wait.as_millis() as i64);
                samples.with(|s| s.hold_sample(sample.id, &error, retry_at))?;
                tracing::warn!(sample = sample.id, %error, "judge failed; sample held for a retry");
                report.held += 1;
                report.last_error = Some(error);
            }
        }
        Ok(())
    }

    /// One vote, retrying transient failures with exponential back-off.
    async fn vote(&self, messages: &Value) -> Result<Option<i8>, LearnError> {
        let mut attempt = 0;
        loop {
            match self.request(messages).await {
                Ok(text) => return Ok(parse_score(&text)),
                Err(e) if e.is_transient() && attempt < self.config.max_retries => {
                    tokio::time::sleep(
                        self.config.retry_delay.saturating_mul(1 << attempt.min(16)),
                    )
                    .await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn request(&self, messages: &Value) -> Result<String, LearnError> {
        let answer = self.answer(messages).await;
        CallObserver::call(&self.config.on_call, answer.as_ref().ok());
        Ok(answer?["choices"][0]["message"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }

    async fn answer(&self, messages: &Value) -> Result<Value, LearnError> {
        let body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_completion_tokens": self.config.max_tokens,
        });
        let key = self.config.api_key.as_deref();
        self.http
            .post(&self.config.base_url, "/chat/completions", key, &body)
            .await
    }
}
