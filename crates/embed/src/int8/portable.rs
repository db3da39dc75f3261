//! The integer sums in plain Rust: the reference the SIMD kernels are tested against, and
//! what runs on CPUs without them.

use super::{BLOCK, GROUP};

/// For one block of weights (`groups` groups of 16 × 2 codes) and each row of `pairs`
/// (`groups` pairs of activation codes), the 16 exact dot products, into `sums`
/// (`[row][16]`).
pub fn sums(block: &[i8], groups: usize, pairs: &[i32], sums: &mut [i32]) {
    for (x, out) in pairs.chunks_exact(groups).zip(sums.chunks_exact_mut(BLOCK)) {
        out.fill(0);
        for (step, &pair) in block.chunks_exact(BLOCK * GROUP).zip(x) {
            // The pair's low half is the first input's code, the high half the second's.
            let (lo, hi) = (i32::from(pair as i16), pair >> 16);
            for (o, w) in out.iter_mut().zip(step.chunks_exact(GROUP)) {
                *o += i32::from(w[0]) * lo + i32::from(w[1]) * hi;
            }
        }
    }
}
