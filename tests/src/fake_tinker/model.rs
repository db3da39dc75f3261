//! The fake's deterministic toy policy: a bigram model whose logits for the next token are
//! one trainable bias per token plus a fixed pseudo-random term of (previous token, token).
//! Sampling and forward compute logprobs with the same function, so the logprob of a
//! sampled token equals what forward_backward reports for it under the same weights (an
//! on-policy importance ratio of exactly 1), and Adam steps on a positive advantage make
//! the sampled tokens likelier, so the loss goes down step after step.

use serde_json::{Value, json};

/// SplitMix64: a tiny deterministic mixer / generator.
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

pub(crate) fn hash_tokens(seed: u64, tokens: &[u32]) -> u64 {
    tokens.iter().fold(mix(seed), |h, t| mix(h ^ u64::from(*t)))
}

/// Trainable weights plus Adam moments and the accumulated gradient.
#[derive(Debug, Clone)]
pub struct Policy {
    pub theta: Vec<f64>,
    pub m: Vec<f64>,
    pub v: Vec<f64>,
    pub grad: Vec<f64>,
    pub steps: u64,
}

impl Policy {
    pub fn new(vocab: u32) -> Self {
        let n = vocab as usize;
        Self {
            theta: vec![0.0; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
            grad: vec![0.0; n],
            steps: 0,
        }
    }
}

fn pair_term(prev: u32, tok: usize) -> f64 {
    let h = mix((u64::from(prev) << 32) ^ tok as u64);
    ((h % 10_000) as f64 / 10_000.0 - 0.5) * 2.0
}

/// Logits for the token after `prev`.
pub fn logits(theta: &[f64], prev: u32) -> Vec<f64> {
    theta
        .iter()
        .enumerate()
        .map(|(j, t)| t + pair_term(prev, j))
        .collect()
}

pub fn log_softmax(logits: &[f64]) -> Vec<f64> {
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = logits.iter().map(|l| (l - max).exp()).sum();
    let lse = max + sum.ln();
    logits.iter().map(|l| l - lse).collect()
}

/// The policy's logprob of `tok` after `prev`, as reported on the wire (f32).
pub fn logprob(theta: &[f64], prev: u32, tok: u32) -> f32 {
    log_softmax(&logits(theta, prev))[tok as usize] as f32
}

pub struct SampleRequest<'a> {
    pub prompt: &'a [u32],
    pub max_tokens: u32,
    pub temperature: f64,
    pub stop_tokens: &'a [u32],
    pub seed: u64,
}

/// One sequence: (tokens, logprobs under temperature 1, stop reason).
pub fn sample(theta: &[f64], req: &SampleRequest<'_>) -> (Vec<u32>, Vec<f32>, &'static str) {
    let mut state = req.seed;
    let mut prev = req.prompt.last().copied().unwrap_or(0);
    let (mut tokens, mut lps) = (Vec::new(), Vec::new());
    for _ in 0..req.max_tokens {
        let l = logits(theta, prev);
        let base = log_softmax(&l);
        let tok = if req.temperature <= 0.0 {
            argmax(&l)
        } else {
            let scaled: Vec<f64> = l.iter().map(|x| x / req.temperature).collect();
            let probs: Vec<f64> = log_softmax(&scaled).iter().map(|x| x.exp()).collect();
            state = mix(state);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            let mut acc = 0.0;
            let mut pick = probs.len() - 1;
            for (i, p) in probs.iter().enumerate() {
                acc += p;
                if u < acc {
                    pick = i;
                    break;
                }
            }
            pick
        } as u32;
        tokens.push(tok);
        lps.push(base[tok as usize] as f32);
        if req.stop_tokens.contains(&tok) {
            return (tokens, lps, "stop");
        }
        prev = tok;
    }
    (tokens, lps, "length")
}

/// A scripted completion with its logprobs under the policy (cut at `max_tokens`).
pub fn score(
    theta: &[f64],
    req: &SampleRequest<'_>,
    script: &[u32],
) -> (Vec<u32>, Vec<f32>, &'static str) {
    let mut prev = req.prompt.last().copied().unwrap_or(0);
    let max = req.max_tokens as usize;
    let tokens: Vec<u32> = script.iter().copied().take(max).collect();
    let logprobs = tokens
        .iter()
        .map(|t| {
            let lp = logprob(theta, prev, *t);
            prev = *t;
            lp
        })
        .collect();
    let reason = if script.len() > max { "length" } else { "stop" };
    (tokens, logprobs, reason)
}

fn argmax(v: &[f64]) -> usize {
    v.iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |(bi, bv), (i, x)| {
            if *x > bv { (i, *x) } else { (bi, bv) }
        })
        .0
}

/// One datum as the fake reads it off the wire.
pub struct Datum {
    pub input: Vec<u32>,
    pub targets: Vec<u32>,
    pub old_logprobs: Vec<f64>,
    pub advantages: Vec<f64>,
}

/// Runs forward (and, with `backward`, accumulates the gradient); returns the
/// `forward_backward` result object.
pub fn forward_backward(
    policy: &mut Policy,
    data: &[Datum],
    loss_fn: &str,
    clip: (f64, f64),
    backward: bool,
) -> Value {
    let mut loss = 0.0;
    let mut tokens = 0usize;
    let mut outputs = Vec::new();
    let mut grad = vec![0.0; policy.theta.len()];
    for d in data {
        let mut lps = Vec::with_capacity(d.input.len());
        for i in 0..d.input.len() {
            let lsm = log_softmax(&logits(&policy.theta, d.input[i]));
            let t = d.targets[i] as usize;
            let lp = lsm[t];
            lps.push(lp as f32);
            let a = d.advantages[i];
            let ratio = (f64::from(lp as f32) - d.old_logprobs[i]).exp();
            let clipped = ratio.clamp(clip.0, clip.1);
            // d(loss)/d(logp of the target) for each loss.
            let (term, dlp) = match loss_fn {
                "ppo" => {
                    let (u, c) = (ratio * a, clipped * a);
                    if u <= c { (-u, -a * ratio) } else { (-c, 0.0) }
                }
                "cispo" => (-clipped * lp * a, -clipped * a),
                _ => (-ratio * a, -a * ratio),
            };
            loss += term;
            tokens += 1;
            if dlp != 0.0 {
                for (k, g) in grad.iter_mut().enumerate() {
                    let ind = if k == t { 1.0 } else { 0.0 };
                    *g += dlp * (ind - lsm[k].exp());
                }
            }
        }
        outputs
            .push(json!({"logprobs": {"data": lps, "dtype": "float32", "shape": [d.input.len()]}}));
    }
    if backward {
        for (g, d) in policy.grad.iter_mut().zip(grad) {
            *g += d;
        }
    }
    json!({
        "loss_fn_output_type": "TensorData",
        "loss_fn_outputs": outputs,
        "metrics": {"loss:sum": loss, "num_tokens:sum": tokens as f64},
    })
}

pub struct Adam {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
}

/// Applies the accumulated gradient with Adam and clears it.
pub fn optim_step(policy: &mut Policy, adam: &Adam) {
    policy.steps += 1;
    let t = policy.steps as i32;
    for k in 0..policy.theta.len() {
        let g = policy.grad[k];
        policy.m[k] = adam.beta1 * policy.m[k] + (1.0 - adam.beta1) * g;
        policy.v[k] = adam.beta2 * policy.v[k] + (1.0 - adam.beta2) * g * g;
        let mhat = policy.m[k] / (1.0 - adam.beta1.powi(t));
        let vhat = policy.v[k] / (1.0 - adam.beta2.powi(t));
        if vhat > 0.0 {
            policy.theta[k] -= adam.lr * mhat / (vhat.sqrt() + adam.eps);
        }
        policy.grad[k] = 0.0;
    }
}
