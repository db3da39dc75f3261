//! Self-attention of each text's tokens over its own tokens, from the fused query, key and
//! value projections of every token.
//!
//! Texts are not padded to a common length: each attends only over its own tokens, so a text
//! gets the same vector alone or in a batch, and no work is spent on padding.

use std::ops::Range;

/// `qkv` holds one row per token: its query, key and value, each `heads × head_dim` wide.
/// Returns each token's attended values (`heads × head_dim` per row), text by text as
/// `texts` gives their token ranges.
pub fn attend(qkv: &[f32], texts: &[Range<usize>], heads: usize, head_dim: usize) -> Vec<f32> {
    let hidden = heads * head_dim;
    let rows = qkv.len() / (3 * hidden);
    let mut out = vec![0.0_f32; rows * hidden];
    let scale = 1.0 / (head_dim as f32).sqrt();
    let (mut keys, mut values, mut scores) = (Vec::new(), Vec::new(), Vec::new());
    for text in texts {
        for h in 0..heads {
            // This head's keys and values, contiguous, one token after another.
            keys.clear();
            values.clear();
            for row in text.clone() {
                let at = row * 3 * hidden + h * head_dim;
                keys.extend_from_slice(&qkv[at + hidden..at + hidden + head_dim]);
                values.extend_from_slice(&qkv[at + 2 * hidden..at + 2 * hidden + head_dim]);
            }
            for row in text.clone() {
                let at = row * 3 * hidden + h * head_dim;
                let query = &qkv[at..at + head_dim];
                scores.clear();
                scores.extend(keys.chunks_exact(head_dim).map(|k| dot(query, k) * scale));
                softmax(&mut scores);
                let context = &mut out[row * hidden + h * head_dim..][..head_dim];
                for (p, v) in scores.iter().zip(values.chunks_exact(head_dim)) {
                    for (c, v) in context.iter_mut().zip(v) {
                        *c += p * v;
                    }
                }
            }
        }
    }
    out
}

/// Eight partial sums, so the compiler keeps them in one vector register.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0_f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

fn softmax(v: &mut [f32]) {
    let max = v.iter().fold(f32::NEG_INFINITY, |m, x| m.max(*x));
    let mut sum = 0.0;
    for x in v.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    for x in v.iter_mut() {
        *x /= sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attention written out from its definition, one text of `n` tokens.
    fn naive(qkv: &[f32], n: usize, heads: usize, d: usize) -> Vec<f32> {
        let hidden = heads * d;
        let mut out = vec![0.0; n * hidden];
        for h in 0..heads {
            for i in 0..n {
                let q = |k: usize| qkv[i * 3 * hidden + h * d + k];
                let mut s: Vec<f32> = (0..n)
                    .map(|j| {
                        (0..d)
                            .map(|k| q(k) * qkv[j * 3 * hidden + hidden + h * d + k])
                            .sum::<f32>()
                            / (d as f32).sqrt()
                    })
                    .collect();
                let m = s.iter().cloned().fold(f32::MIN, f32::max);
                let z: f32 = s.iter().map(|x| (x - m).exp()).sum();
                s.iter_mut().for_each(|x| *x = (*x - m).exp() / z);
                for k in 0..d {
                    out[i * hidden + h * d + k] = (0..n)
                        .map(|j| s[j] * qkv[j * 3 * hidden + 2 * hidden + h * d + k])
                        .sum();
                }
            }
        }
        out
    }

    fn values(n: usize, seed: f32) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as f32 + 1.0) * seed).sin() * 2.0)
            .collect()
    }

    #[test]
    fn matches_the_definition_and_keeps_texts_apart() {
        let (heads, d) = (3, 10);
        let (a, b) = (
            values(4 * 3 * heads * d, 0.37),
            values(2 * 3 * heads * d, 0.91),
        );
        let both: Vec<f32> = a.iter().chain(&b).copied().collect();
        let got = attend(&both, &[0..4, 4..6], heads, d);
        let want: Vec<f32> = naive(&a, 4, heads, d)
            .into_iter()
            .chain(naive(&b, 2, heads, d))
            .collect();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-5, "{g} vs {w}");
        }
        assert_eq!(
            attend(&a, std::slice::from_ref(&(0..4)), heads, d),
            got[..4 * heads * d],
            "alone as in a batch"
        );
    }
}
