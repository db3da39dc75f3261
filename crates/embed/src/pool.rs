//! Token vectors to one unit-length sentence vector.

use candle_core::{DType, Tensor};

use crate::config::Pooling;

/// `[batch, seq, hidden]` token vectors and their `[batch, seq]` mask to `[batch, hidden]`.
pub fn pool(tokens: &Tensor, mask: &Tensor, pooling: Pooling) -> candle_core::Result<Tensor> {
    match pooling {
        Pooling::Cls => tokens.narrow(1, 0, 1)?.squeeze(1),
        Pooling::Mean => {
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = tokens.broadcast_mul(&mask)?.sum(1)?;
            // At least the special tokens are there; the clamp only guards an empty mask.
            let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
            summed.broadcast_div(&counts)
        }
    }
}

/// Scales to unit length, as sentence-transformers' Normalize does (same 1e-12 floor).
pub fn normalize(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}
