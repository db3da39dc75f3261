//! GELU in its exact (erf) form, as BERT models are trained with, computed without calls into
//! libm: candle's `gelu_erf` evaluates `erff` one element at a time (with an `expf` inside),
//! about a tenth of the proxy's time in a profile of retrieval by meaning. A rational
//! approximation of erf (the one Eigen and XLA use; error within a few float ulps) is plain
//! arithmetic over a slice, which the compiler turns into vector instructions.

use candle_core::{DType, Tensor};

/// erf(x) for single-precision `x`: outside [-4, 4] it is ±1 to within a float's precision.
/// Plain `a * b + c`, not `mul_add`: without the FMA target feature `mul_add` is a call into
/// libm per operation, which made this slower than candle's own.
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    let p = x2 * p - 2.101_024e-6;
    let p = x2 * p - 5.692_506_4e-5;
    let p = x2 * p - 7.349_906_3e-4;
    let p = x2 * p - 2.954_6e-3;
    let p = x2 * p - 1.609_603_3e-2;
    let q = x2 * -1.456_607_2e-5 - 2.133_740_6e-4;
    let q = x2 * q - 1.682_827e-3;
    let q = x2 * q - 7.373_329e-3;
    let q = x2 * q - 1.426_474e-2;
    x * p / q
}

/// `0.5 x (1 + erf(x / √2))`, element by element.
pub fn gelu_erf(x: &Tensor) -> candle_core::Result<Tensor> {
    if x.dtype() != DType::F32 {
        return x.gelu_erf();
    }
    let mut v = x.flatten_all()?.to_vec1::<f32>()?;
    for e in &mut v {
        *e = 0.5 * *e * (1.0 + erf(*e * std::f32::consts::FRAC_1_SQRT_2));
    }
    Tensor::from_vec(v, x.shape(), x.device())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use candle_core::Device;

    use super::*;

    #[test]
    fn matches_candles_exact_gelu_across_the_range() {
        let xs: Vec<f32> = (-12_000..=12_000).map(|i| i as f32 / 1000.0).collect();
        let t = Tensor::from_vec(xs.clone(), (3, xs.len() / 3), &Device::Cpu).unwrap();
        let exact = t
            .gelu_erf()
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let fast = gelu_erf(&t)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let worst = exact
            .iter()
            .zip(&fast)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 2e-6, "largest difference {worst}");
        assert_eq!(gelu_erf(&t).unwrap().dims(), t.dims());
    }
}
