//! Layer normalisation over each token's vector, in place.

use crate::error::{Result, invalid};
use crate::layout;

pub struct LayerNorm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl LayerNorm {
    pub fn new(weight: Vec<f32>, bias: Vec<f32>, eps: f64) -> Result<Self> {
        if weight.len() != bias.len() || weight.is_empty() {
            return Err(invalid(
                layout::WEIGHTS,
                format!(
                    "a LayerNorm of {} weights and {} biases",
                    weight.len(),
                    bias.len()
                ),
            ));
        }
        Ok(Self {
            weight,
            bias,
            eps: eps as f32,
        })
    }

    /// Normalises every row of `x` (rows as long as the weight) to mean 0 and variance 1,
    /// then scales and shifts it.
    pub fn apply(&self, x: &mut [f32]) {
        let n = self.weight.len() as f32;
        for row in x.chunks_exact_mut(self.weight.len()) {
            let mean = row.iter().sum::<f32>() / n;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inv * w + b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn each_row_gets_mean_zero_and_unit_variance_before_the_affine() {
        let norm = LayerNorm::new(vec![1.0; 4], vec![0.0; 4], 1e-12).unwrap();
        let mut x = vec![1.0, 2.0, 3.0, 4.0, -5.0, 5.0, -5.0, 5.0];
        norm.apply(&mut x);
        for row in x.chunks(4) {
            let mean: f32 = row.iter().sum::<f32>() / 4.0;
            let var: f32 = row.iter().map(|v| v * v).sum::<f32>() / 4.0;
            assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-5, "{row:?}");
        }
        let affine = LayerNorm::new(vec![2.0, 2.0], vec![1.0, -1.0], 1e-12).unwrap();
        let mut y = vec![0.0, 2.0];
        affine.apply(&mut y);
        assert!(
            (y[0] + 1.0).abs() < 1e-5 && (y[1] - 1.0).abs() < 1e-5,
            "{y:?}"
        );
        assert!(LayerNorm::new(vec![1.0], vec![], 1e-5).is_err());
    }
}
