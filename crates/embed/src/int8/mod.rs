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
pub(crate) struct Rows {
    pub pairs: Vec<i32>,
    pub scales: Vec<f32>,
}

impl Rows {
    pub fn len(&self) -> usize {
        self.scales.len()
    }
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
        let n_rows = rows.len();
        if n_rows == 0 {
            return Some(Vec::new());
        }
        let blocks = self.bias.len() / BLOCK;
        // Output as [block][row][16]: each block's part is contiguous, so blocks can be
        // shared out among threads; reordered into rows at the end.
        let mut by_block = vec![0.0_f32; blocks * n_rows * BLOCK];
        let work = n_rows * self.width * blocks * BLOCK;
        let threads = rayon::current_num_threads().clamp(1, blocks);
        if work < PARALLEL_MIN || threads == 1 {
            // On the caller's thread: handing a question's layer to the pool (and waiting
            // for it) costs more than the layer.
            self.blocks(kernel, &rows, 0..blocks, &mut by_block);
        } else {
            let per_task = blocks.div_ceil(threads);
            by_block
                .par_chunks_mut(per_task * n_rows * BLOCK)
                .enumerate()
                .for_each(|(task, out)| {
                    let first = task * per_task;
                    let count = out.len() / (n_rows * BLOCK);
                    self.blocks(kernel, &rows, first..first + count, out);
                });
        }
        let mut y = vec![0.0_f32; n_rows * self.outputs];
        for (row, out) in y.chunks_exact_mut(self.outputs).enumerate() {
            for (block, part) in out.chunks_mut(BLOCK).enumerate() {
                let at = (block * n_rows + row) * BLOCK;
                part.copy_from_slice(&by_block[at..at + part.len()]);
            }
        }
        Some(y)
    }

    /// Output blocks `blocks` for every row, into `out` (`[block][row][16]`).
    fn blocks(&self, kernel: Kernel, rows: &Rows, blocks: std::ops::Range<usize>, out: &mut [f32]) {
        let groups = self.width / GROUP;
        let weights = &self.packed
            [blocks.start * groups * BLOCK * GROUP..blocks.end * groups * BLOCK * GROUP];
        let sums = &mut vec![0_i32; out.len()];
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Vnni if x86::has_vnni() => x86::vnni(weights, groups, rows, sums),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 if x86::has_avx2() => x86::avx2(weights, groups, rows, sums),
            _ => portable::sums(weights, groups, rows, sums),
        }
        let n_rows = rows.len();
        for (b, block) in blocks.enumerate() {
            let at = block * BLOCK;
            let scales = &self.scales[at..at + BLOCK];
            let bias = &self.bias[at..at + BLOCK];
            for (row, row_scale) in rows.scales.iter().enumerate() {
                let start = (b * n_rows + row) * BLOCK;
                let (sums, out) = (&sums[start..start + BLOCK], &mut out[start..start + BLOCK]);
                for i in 0..BLOCK {
                    out[i] = sums[i] as f32 * (row_scale * scales[i]) + bias[i];
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
