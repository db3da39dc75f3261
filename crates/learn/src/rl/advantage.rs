//! Advantages and datum construction.
//!
//! Rewards are z-scored over the batch (population std); a batch whose rewards are all
//! equal carries no signal and gets zero advantages rather than a division by ~0. Each
//! sample becomes one [`Datum`] over prompt ++ completion shifted by one: position `i`
//! predicts token `i + 1`, so the first completion token is predicted at position P − 1.
//! Prompt positions get logprob 0 and advantage 0 (masked); completion positions get the
//! sampler's logprob of exactly that token and the sample's advantage, plus the per-token
//! distillation term when a teacher scored the tokens.

use crate::error::LearnError;
use crate::types::Datum;

/// Below this std the rewards are treated as all equal.
const MIN_STD: f64 = 1e-8;

/// `(r − mean) / std` per reward; all zeros when the rewards are (nearly) equal.
pub fn normalize_rewards(rewards: &[f64]) -> Vec<f64> {
    if rewards.is_empty() {
        return Vec::new();
    }
    let n = rewards.len() as f64;
    let mean = rewards.iter().sum::<f64>() / n;
    let var = rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
    let std = var.sqrt();
    if !std.is_finite() || std < MIN_STD {
        return vec![0.0; rewards.len()];
    }
    rewards.iter().map(|r| (r - mean) / std).collect()
}

/// On-policy distillation: the teacher's logprob of each completion token and the weight
/// of the per-token reverse-KL penalty (`opd.kl_coef`).
#[derive(Debug, Clone, Copy)]
pub struct KlPenalty<'a> {
    pub teacher_logprobs: &'a [f32],
    pub coef: f32,
}

/// Per completion token: `advantage − coef × (student_lp − teacher_lp)`.
pub fn token_advantages(
    advantage: f32,
    student_logprobs: &[f32],
    kl: Option<KlPenalty<'_>>,
) -> Result<Vec<f32>, LearnError> {
    let Some(kl) = kl else {
        return Ok(vec![advantage; student_logprobs.len()]);
    };
    if kl.teacher_logprobs.len() != student_logprobs.len() {
        return Err(LearnError::invalid(
            "teacher logprobs",
            format!(
                "{} values for {} completion tokens",
                kl.teacher_logprobs.len(),
                student_logprobs.len()
            ),
        ));
    }
    Ok(student_logprobs
        .iter()
        .zip(kl.teacher_logprobs)
        .map(|(s, t)| advantage - kl.coef * (s - t))
        .collect())
}

/// One training datum from the exact prompt ids and sampled ids with their logprobs.
pub fn build_datum(
    prompt: &[u32],
    completion: &[u32],
    completion_logprobs: &[f32],
    advantage: f32,
    kl: Option<KlPenalty<'_>>,
) -> Result<Datum, LearnError> {
    if prompt.is_empty() {
        return Err(LearnError::invalid("sample", "the prompt has no tokens"));
    }
    if completion.is_empty() {
        return Err(LearnError::invalid(
            "sample",
            "the completion has no tokens",
        ));
    }
    if completion.len() != completion_logprobs.len() {
        return Err(LearnError::invalid(
            "sample",
            format!(
                "{} completion tokens but {} logprobs",
                completion.len(),
                completion_logprobs.len()
            ),
        ));
    }
    let masked = prompt.len() - 1;
    let all: Vec<u32> = prompt.iter().chain(completion).copied().collect();
    let input = all[..all.len() - 1].to_vec();
    let targets = all[1..].to_vec();
    let mut logprobs = vec![0.0; masked];
    logprobs.extend_from_slice(completion_logprobs);
    let mut advantages = vec![0.0; masked];
    advantages.extend(token_advantages(advantage, completion_logprobs, kl)?);
    Datum::new(input, targets, logprobs, advantages)
}
