//! Token vectors to one unit-length sentence vector.

use crate::config::Pooling;

/// One text's token vectors (`rows × hidden`, row-major) to its sentence vector.
pub fn pool(tokens: &[f32], hidden: usize, pooling: Pooling) -> Vec<f32> {
    let rows = tokens.chunks_exact(hidden);
    match pooling {
        Pooling::Cls => tokens
            .get(..hidden)
            .map(<[f32]>::to_vec)
            .unwrap_or_else(|| vec![0.0; hidden]),
        Pooling::Mean => {
            let n = rows.len().max(1) as f32;
            let mut sum = vec![0.0_f32; hidden];
            for row in rows {
                for (s, v) in sum.iter_mut().zip(row) {
                    *s += v;
                }
            }
            sum.iter_mut().for_each(|s| *s /= n);
            sum
        }
    }
}

/// Scales to unit length, as sentence-transformers' Normalize does (same 1e-12 floor).
pub fn normalize(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_averages_the_tokens_and_cls_takes_the_first() {
        let tokens = [1.0, 2.0, 3.0, 6.0];
        assert_eq!(pool(&tokens, 2, Pooling::Mean), [2.0, 4.0]);
        assert_eq!(pool(&tokens, 2, Pooling::Cls), [1.0, 2.0]);
        assert_eq!(pool(&[], 2, Pooling::Mean), [0.0, 0.0], "no tokens");
        assert_eq!(pool(&[], 2, Pooling::Cls), [0.0, 0.0], "no tokens");
        let unit = normalize(vec![3.0, 4.0]);
        assert!((unit[0] - 0.6).abs() < 1e-6 && (unit[1] - 0.8).abs() < 1e-6);
        assert_eq!(normalize(vec![0.0, 0.0]), [0.0, 0.0]);
    }
}
