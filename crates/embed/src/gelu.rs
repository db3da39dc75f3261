//! The feed-forward activations, in place. GELU in its exact (erf) form, as BERT models are
//! trained with, is computed without calls into libm: `erff` one element at a time (with an
//! `expf` inside) was about a tenth of the proxy's time in a profile of retrieval by meaning.
//! A rational approximation of erf (the one Eigen and XLA use; error within a few float ulps)
//! is plain arithmetic over a slice, which the compiler turns into vector instructions.

/// erf(x) for single-precision `x`: outside [-4, 4] it is ±1 to within a float's precision.
/// Plain `a * b + c`, not `mul_add`: without the FMA target feature `mul_add` is a call into
/// libm per operation, which made this slower than libm's `erff`.
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
pub fn gelu_erf(x: &mut [f32]) {
    for e in x {
        *e = 0.5 * *e * (1.0 + erf(*e * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// GELU's tanh approximation (`gelu_new`, `gelu_pytorch_tanh`).
pub fn gelu_tanh(x: &mut [f32]) {
    let c = (2.0 / std::f32::consts::PI).sqrt();
    for e in x {
        *e = 0.5 * *e * (1.0 + (c * (*e + 0.044_715 * *e * *e * *e)).tanh());
    }
}

pub fn relu(x: &mut [f32]) {
    for e in x {
        *e = e.max(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// erf to within 1.5e-7 (Abramowitz and Stegun 7.1.26), in f64: an independent reference.
    fn erf_reference(x: f64) -> f64 {
        let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
        let poly = t
            * (0.254_829_592
                + t * (-0.284_496_736
                    + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
        (1.0 - poly * (-x * x).exp()).copysign(x)
    }

    fn worst(got: &[f32], want: impl Fn(f64) -> f64, xs: &[f32]) -> f64 {
        got.iter()
            .zip(xs)
            .map(|(g, x)| (f64::from(*g) - want(f64::from(*x))).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn matches_the_exact_gelu_across_the_range() {
        let xs: Vec<f32> = (-12_000..=12_000).map(|i| i as f32 / 1000.0).collect();
        let mut fast = xs.clone();
        gelu_erf(&mut fast);
        let exact = |x: f64| 0.5 * x * (1.0 + erf_reference(x / std::f64::consts::SQRT_2));
        let w = worst(&fast, exact, &xs);
        assert!(w < 2e-6, "largest difference {w}");

        let mut approx = xs.clone();
        gelu_tanh(&mut approx);
        let c = (2.0 / std::f64::consts::PI).sqrt();
        let tanh = |x: f64| 0.5 * x * (1.0 + (c * (x + 0.044_715 * x * x * x)).tanh());
        let w = worst(&approx, tanh, &xs);
        assert!(w < 1e-5, "tanh form: largest difference {w}");

        let mut r = vec![-1.0, 0.0, 2.5];
        relu(&mut r);
        assert_eq!(r, [0.0, 0.0, 2.5]);
    }
}
