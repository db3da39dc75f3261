//! The scan's integer dot products with AVX-512 VNNI (`vpdpbusd`: 64 byte products per
//! instruction, against 8 per `pmaddwd` of the baseline target).
//!
//! `vpdpbusd` multiplies unsigned bytes by signed ones, so the query is shifted to `q + 128`
//! (1..=255) and each stored vector's `128 × Σv` taken back off: the sums are exactly those
//! of the portable code. `unsafe` is allowed here as in `int8/x86.rs`: a function compiled
//! for CPU features the build does not assume is called only after checking the CPU has
//! them, and every load goes through a bounds-checked slice first.
#![allow(unsafe_code)]

use std::arch::x86_64::*;

/// Bytes of one step: one 512-bit register.
const STEP: usize = 64;
/// Stored vectors compared together, so their sums are independent chains.
const TOGETHER: usize = 4;

/// As [`super::int_dot`] of the codes `q` with each vector of `data` (`dims` long), into
/// `out`, given each stored vector's `Σv` in `sums`. `false` (nothing written) on a CPU
/// without AVX-512 VNNI: the caller then runs the portable code.
pub fn dots(q: &[i8], data: &[i8], dims: usize, sums: &[i32], out: &mut [i32]) -> bool {
    if crate::int8::Kernel::detect() != crate::int8::Kernel::Vnni {
        return false;
    }
    let shifted: Vec<u8> = q.iter().map(|&c| (i16::from(c) + 128) as u8).collect();
    // SAFETY: the CPU has AVX-512F, AVX-512BW and AVX-512 VNNI (what `Kernel::Vnni` means).
    unsafe { vnni_dots(&shifted, data, dims, sums, out) };
    true
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn vnni_dots(shifted: &[u8], data: &[i8], dims: usize, sums: &[i32], out: &mut [i32]) {
    let query = &shifted[..dims];
    let n = out.len().min(sums.len()).min(data.len() / dims.max(1));
    let (data, sums, out) = (&data[..n * dims], &sums[..n], &mut out[..n]);
    let mut tiles = data.chunks_exact(TOGETHER * dims);
    let mut outs = out.chunks_exact_mut(TOGETHER);
    let mut tile_sums = sums.chunks_exact(TOGETHER);
    for ((tile, out), sums) in (&mut tiles).zip(&mut outs).zip(&mut tile_sums) {
        let mut acc = [_mm512_setzero_si512(); TOGETHER];
        for at in (0..dims).step_by(STEP) {
            let len = STEP.min(dims - at);
            let q = load(&query[at..at + len]);
            for (k, acc) in acc.iter_mut().enumerate() {
                let v = load_signed(&tile[k * dims + at..k * dims + at + len]);
                *acc = _mm512_dpbusd_epi32(*acc, q, v);
            }
        }
        for ((o, acc), s) in out.iter_mut().zip(acc).zip(sums) {
            *o = _mm512_reduce_add_epi32(acc) - 128 * s;
        }
    }
    for ((v, o), s) in tiles
        .remainder()
        .chunks_exact(dims)
        .zip(outs.into_remainder())
        .zip(tile_sums.remainder())
    {
        let mut acc = _mm512_setzero_si512();
        for at in (0..dims).step_by(STEP) {
            let len = STEP.min(dims - at);
            let q = load(&query[at..at + len]);
            acc = _mm512_dpbusd_epi32(acc, q, load_signed(&v[at..at + len]));
        }
        *o = _mm512_reduce_add_epi32(acc) - 128 * s;
    }
}

/// Up to 64 bytes, the rest of the register zero.
#[target_feature(enable = "avx512f,avx512bw")]
fn load(bytes: &[u8]) -> __m512i {
    let len = bytes.len().min(STEP);
    let mask: __mmask64 = if len == STEP { !0 } else { (1 << len) - 1 };
    // SAFETY: the mask covers `len` bytes, all within `bytes`; masked-off bytes are not read.
    unsafe { _mm512_maskz_loadu_epi8(mask, bytes.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f,avx512bw")]
fn load_signed(bytes: &[i8]) -> __m512i {
    let len = bytes.len().min(STEP);
    let mask: __mmask64 = if len == STEP { !0 } else { (1 << len) - 1 };
    // SAFETY: as in `load`.
    unsafe { _mm512_maskz_loadu_epi8(mask, bytes.as_ptr()) }
}
