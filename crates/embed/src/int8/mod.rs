//! Dense layers on integers: weights in 8 bits (one scale per output), each token's
//! activations in 16 bits (one scale per token), products summed exactly in `i32` and scaled
//! back to f32 with the bias added.
//!
//! Embedding a question is a handful of tokens through every weight of the encoder: 42 MB of
//! f32 per question for the 6-layer test model, 84 MB for the 12-layer default, read from
//! memory each time because they do not stay in cache. In 8 bits they are a quarter of that,
//! and CPUs multiply 16-bit integers twice as fast as floats (`vpdpwssd` with AVX-512 VNNI,
//! `vpmaddwd` with AVX2). Activations stay in 16 bits because 8 were not enough: BERT's
//! hidden states have a few large components, and one scale per token for 8-bit codes moved
//! sentence vectors to a cosine of 0.991–0.998 of f32's; with 16 bits only the weights'
//! rounding is left, 0.9985 at worst (the crate's `tests/embed.rs` holds the bound).
//!
//! The kernels are chosen once, by what the CPU has: AVX-512 VNNI, AVX2, or plain Rust. All
//! three compute the same integer sums, so they give the same vectors to the last bit.

mod portable;
#[cfg(target_arch = "x86_64")]
mod x86;

use std::sync::OnceLock;

use rayon::prelude::*;

/// Outputs computed together: one 512-bit register of `i32` sums.
pub(crate) const BLOCK: usize = 16;
/// Inputs multiplied per step: two 16-bit products summed into one `i32`.
pub(crate) const GROUP: usize = 2;
/// The largest magnitude a weight is scaled to.
const WEIGHT_LEVELS: i64 = 127;
/// The largest magnitude an activation is scaled to, unless the layer is so wide that
/// `inputs × 127 × this` could overflow an `i32` sum (see [`activation_levels`]).
const ACTIVATION_LEVELS: i64 = 32_767;
/// Below this many products (about 40 µs of work) a layer runs on the caller's thread alone,
/// where handing half of it to another costs about what it saves. Above, a question of 24
/// tokens took 4.0 ms on two threads against 4.8 ms on one (the mean of 1,500 in a row).
const PARALLEL_MIN: usize = 4 << 20;

/// A dense layer `y = x Wᵀ + b` whose weights are 8-bit integers.
pub struct Int8Linear {
    /// Inputs as the model has them, and padded to a multiple of [`GROUP`].
    inputs: usize,
    width: usize,
    /// Outputs as the model has them.
    outputs: usize,
    /// Weights in blocks of [`BLOCK`] outputs: for each block, for each group of [`GROUP`]
    /// inputs, the block's outputs one after another, each with its group's 2 weights. One
    /// 32-byte load is then a step of 16 outputs.
    packed: Vec<i8>,
    /// Per output (padded to blocks): the factor back to f32, and the bias.
    scales: Vec<f32>,
    bias: Vec<f32>,
}

/// Which kernel this CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    Vnni,
    Avx2,
    Portable,
}

impl Kernel {
    /// The fastest kernel this CPU has; detected once.
    pub fn detect() -> Kernel {
        static DETECTED: OnceLock<Kernel> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            {
                if x86::has_vnni() {
                    return Kernel::Vnni;
                }
                if x86::has_avx2() {
                    return Kernel::Avx2;
                }
            }
            Kernel::Portable
        })
    }

    /// Every kernel this CPU can run, the portable one included (for tests that compare them).
    #[cfg(test)]
    pub fn available() -> Vec<Kernel> {
        let mut all = vec![Kernel::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if x86::has_avx2() {
                all.push(Kernel::Avx2);
            }
            if x86::has_vnni() {
                all.push(Kernel::Vnni);
            }
        }
        all
    }
}

/// Tokens quantized for one layer: row by row, the codes of each pair of inputs as one `i32`
/// (the first in the low half, as the kernels broadcast it), each row `width / 2` long, and
/// each row's factor back to f32.
struct Rows {
    pairs: Vec<i32>,
    scales: Vec<f32>,
}

impl Int8Linear {
    /// From an f32 weight `[outputs, inputs]` (row-major, as checkpoints store it) and a bias
    /// of `outputs` values. `None` when the lengths disagree or a weight is not finite.
    pub fn new(weight: &[f32], outputs: usize, inputs: usize, bias: Vec<f32>) -> Option<Self> {
        if outputs == 0 || inputs == 0 || weight.len() != outputs * inputs || bias.len() != outputs
        {
            return None;
        }
        let padded_in = inputs.div_ceil(GROUP) * GROUP;
        let padded_out = outputs.div_ceil(BLOCK) * BLOCK;
        let groups = padded_in / GROUP;
        let mut packed = vec![0_i8; padded_out * padded_in];
        let mut scales = vec![0.0; padded_out];
        for (out, row) in weight.chunks_exact(inputs).enumerate() {
            let (codes, scale) = quantize(row, WEIGHT_LEVELS)?;
            scales[out] = scale;
            let (block, lane) = (out / BLOCK, out % BLOCK);
            for (i, code) in codes.into_iter().enumerate() {
                let (group, within) = (i / GROUP, i % GROUP);
                // Within ±127 by construction.
                packed[((block * groups + group) * BLOCK + lane) * GROUP + within] = code as i8;
            }
        }
        let mut bias = bias;
        bias.resize(padded_out, 0.0);
        Some(Self {
            inputs,
            width: padded_in,
            outputs,
            packed,
            scales,
            bias,
        })
    }

    /// `x` is `rows × inputs` f32, row-major; the result `rows × outputs`. `None` when `x`
    /// has another width.
    pub fn forward(&self, x: &[f32], inputs: usize) -> Option<Vec<f32>> {
        self.forward_with(Kernel::detect(), x, inputs)
    }

    pub(crate) fn forward_with(
        &self,
        kernel: Kernel,
        x: &[f32],
        inputs: usize,
    ) -> Option<Vec<f32>> {
        if inputs != self.inputs || !x.len().is_multiple_of(inputs) {
            return None;
        }
        let rows = quantize_rows(x, inputs, self.width);
        let n_rows = rows.scales.len();
        if n_rows == 0 {
            return Some(Vec::new());
        }
        let mut y = vec![0.0_f32; n_rows * self.outputs];
        let work = n_rows * self.width * self.bias.len();
        let threads = rayon::current_num_threads().clamp(1, n_rows);
        if work < PARALLEL_MIN || threads == 1 {
            // On the caller's thread: handing a question's layer to the pool (and waiting
            // for it) costs more than the layer.
            self.rows_into(kernel, &rows.pairs, &rows.scales, &mut y);
        } else {
            // Rows are shared out, so each thread writes a contiguous part of the result and
            // nothing larger than a block's sums is held beside it.
            let per_task = n_rows.div_ceil(threads);
            let groups = self.width / GROUP;
            y.par_chunks_mut(per_task * self.outputs)
                .zip(rows.pairs.par_chunks(per_task * groups))
                .zip(rows.scales.par_chunks(per_task))
                .for_each(|((y, pairs), scales)| self.rows_into(kernel, pairs, scales, y));
        }
        Some(y)
    }

    /// The outputs of the rows whose codes are `pairs` and factors `scales`, into `y`
    /// (`rows × outputs`), one block of 16 outputs at a time.
    fn rows_into(&self, kernel: Kernel, pairs: &[i32], scales: &[f32], y: &mut [f32]) {
        let groups = self.width / GROUP;
        let mut sums = vec![0_i32; scales.len() * BLOCK];
        let block_len = groups * BLOCK * GROUP;
        for (b, weights) in self.packed.chunks_exact(block_len).enumerate() {
            match kernel {
                #[cfg(target_arch = "x86_64")]
                Kernel::Vnni => x86::vnni(weights, groups, pairs, &mut sums),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => x86::avx2(weights, groups, pairs, &mut sums),
                _ => portable::sums(weights, groups, pairs, &mut sums),
            }
            let at = b * BLOCK;
            let width = BLOCK.min(self.outputs - at);
            let (out_scales, bias) = (&self.scales[at..at + width], &self.bias[at..at + width]);
            for ((row, sums), row_scale) in y
                .chunks_exact_mut(self.outputs)
                .zip(sums.chunks_exact(BLOCK))
                .zip(scales)
            {
                for (((o, s), scale), bias) in row[at..at + width]
                    .iter_mut()
                    .zip(sums)
                    .zip(out_scales)
                    .zip(bias)
                {
                    *o = *s as f32 * (row_scale * scale) + bias;
                }
            }
        }
    }
}

/// The largest magnitude in `v`; `None` when a value is not finite. Eight lanes, so the
/// compiler keeps them in one vector register.
fn max_abs(v: &[f32]) -> Option<f32> {
    let (mut max, mut poison) = ([0.0_f32; 8], [0.0_f32; 8]);
    let chunks = v.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..8 {
            max[i] = max[i].max(c[i].abs());
            // 0 for a finite value, NaN for an infinity or a NaN.
            poison[i] += c[i] * 0.0;
        }
    }
    for (i, x) in tail.iter().enumerate() {
        max[i] = max[i].max(x.abs());
        poison[i] += x * 0.0;
    }
    poison
        .iter()
        .all(|p| *p == 0.0)
        .then(|| max.iter().fold(0.0_f32, |m, x| m.max(*x)))
}

/// `x` rounded half away from zero, as an integer: without SSE4.1 (not in the baseline
/// x86-64 target) `f32::round` is a call into libm per value; this is plain arithmetic.
fn round(x: f32) -> i32 {
    (x + 0.5_f32.copysign(x)) as i32
}

/// Codes scaled so the largest magnitude is `levels`, and the factor back; `None` when a
/// value is not finite.
fn quantize(v: &[f32], levels: i64) -> Option<(Vec<i32>, f32)> {
    let max = max_abs(v)?;
    if max == 0.0 {
        return Some((vec![0; v.len()], 0.0));
    }
    let levels = levels as f32;
    let to_code = levels / max;
    Some((v.iter().map(|x| round(x * to_code)).collect(), max / levels))
}

/// Activation levels for a layer `width` inputs wide: an `i32` sum of `width` products of a
/// weight (±127) and an activation (±levels) cannot overflow. 32,767 up to 516 inputs,
/// 11,007 at 1,536.
fn activation_levels(width: usize) -> i64 {
    let bound = i64::from(i32::MAX) / (width.max(1) as i64 * WEIGHT_LEVELS);
    bound.clamp(1, ACTIVATION_LEVELS)
}

/// Each row of `x` (`inputs` wide) as pairs of codes, padded to `width` inputs, with its
/// factor back. A row with a value that is not finite becomes zeros with a NaN factor, so
/// its outputs are NaN as they would be in f32.
fn quantize_rows(x: &[f32], inputs: usize, width: usize) -> Rows {
    let levels = activation_levels(width);
    let n = x.len() / inputs;
    let mut pairs = vec![0_i32; n * width / GROUP];
    let mut scales = Vec::with_capacity(n);
    for (row, dst) in x
        .chunks_exact(inputs)
        .zip(pairs.chunks_exact_mut(width / GROUP))
    {
        let Some(max) = max_abs(row) else {
            scales.push(f32::NAN);
            continue;
        };
        let to_code = if max > 0.0 { levels as f32 / max } else { 0.0 };
        let pack = |lo: f32, hi: f32| (round(hi * to_code) << 16) | (round(lo * to_code) & 0xffff);
        let values = row.chunks_exact(GROUP);
        if let [last] = values.remainder() {
            dst[inputs / GROUP] = pack(*last, 0.0);
        }
        for (d, v) in dst.iter_mut().zip(values) {
            *d = pack(v[0], v[1]);
        }
        scales.push(max / levels as f32);
    }
    Rows { pairs, scales }
}

#[cfg(test)]
mod tests;
