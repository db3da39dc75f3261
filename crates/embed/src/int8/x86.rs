//! The integer sums with x86 SIMD: AVX-512 VNNI (`vpdpwssd`) and AVX2 (`vpmaddwd`).
//!
//! `unsafe` is allowed here and in the scan's `quantized/x86.rs`, nowhere else in the crate:
//! a function compiled for CPU features the build does not assume can only be called through
//! `unsafe`, after checking at run time that the CPU has them. Every memory access goes
//! through a bounds-checked slice first.
#![allow(unsafe_code)]

use std::arch::x86_64::*;

use super::{BLOCK, GROUP};

/// Rows computed together: each group's weights are loaded and widened once for four tokens.
const ROWS: usize = 4;
/// Bytes of one step: 16 outputs × 2 inputs.
const STEP: usize = BLOCK * GROUP;

pub fn has_vnni() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vnni")
}

pub fn has_avx2() -> bool {
    is_x86_feature_detected!("avx2")
}

/// As [`super::portable::sums`], for one block of weights.
pub fn vnni(weights: &[i8], groups: usize, pairs: &[i32], sums: &mut [i32]) {
    if !has_vnni() {
        return super::portable::sums(weights, groups, pairs, sums);
    }
    // SAFETY: the CPU has AVX-512F, AVX-512BW and AVX-512 VNNI (checked above).
    unsafe { vnni_kernel(weights, groups, pairs, sums) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn vnni_kernel(weights: &[i8], groups: usize, pairs: &[i32], sums: &mut [i32]) {
    let block = &weights[..groups * STEP];
    let out = &mut sums[..pairs.len() / groups * BLOCK];
    let mut tiles = pairs.chunks_exact(ROWS * groups);
    let mut outs = out.chunks_exact_mut(ROWS * BLOCK);
    for (x, out) in (&mut tiles).zip(&mut outs) {
        let (x01, x23) = x.split_at(2 * groups);
        let (x0, x1) = x01.split_at(groups);
        let (x2, x3) = x23.split_at(groups);
        let mut acc = [_mm512_setzero_si512(); ROWS];
        for ((((step, &a), &b), &c), &d) in block.chunks_exact(STEP).zip(x0).zip(x1).zip(x2).zip(x3)
        {
            let w = widen_512(step);
            acc[0] = _mm512_dpwssd_epi32(acc[0], _mm512_set1_epi32(a), w);
            acc[1] = _mm512_dpwssd_epi32(acc[1], _mm512_set1_epi32(b), w);
            acc[2] = _mm512_dpwssd_epi32(acc[2], _mm512_set1_epi32(c), w);
            acc[3] = _mm512_dpwssd_epi32(acc[3], _mm512_set1_epi32(d), w);
        }
        for (a, out) in acc.iter().zip(out.chunks_exact_mut(BLOCK)) {
            store_512(out, *a);
        }
    }
    // The last rows, fewer than four, one at a time.
    for (x, out) in tiles
        .remainder()
        .chunks_exact(groups)
        .zip(outs.into_remainder().chunks_exact_mut(BLOCK))
    {
        let mut acc = _mm512_setzero_si512();
        for (step, &a) in block.chunks_exact(STEP).zip(x) {
            acc = _mm512_dpwssd_epi32(acc, _mm512_set1_epi32(a), widen_512(step));
        }
        store_512(out, acc);
    }
}

/// One step's 32 weights, widened to 16 bits.
#[target_feature(enable = "avx512f,avx512bw")]
fn widen_512(step: &[i8]) -> __m512i {
    let step = &step[..STEP];
    // SAFETY: `step` is 32 bytes, the width of the load.
    _mm512_cvtepi8_epi16(unsafe { _mm256_loadu_si256(step.as_ptr().cast()) })
}

#[target_feature(enable = "avx512f")]
fn store_512(out: &mut [i32], v: __m512i) {
    let out = &mut out[..BLOCK];
    // SAFETY: `out` is 16 i32, the width of the store.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), v) }
}

/// As [`super::portable::sums`], for one block of weights.
pub fn avx2(weights: &[i8], groups: usize, pairs: &[i32], sums: &mut [i32]) {
    if !has_avx2() {
        return super::portable::sums(weights, groups, pairs, sums);
    }
    // SAFETY: the CPU has AVX2 (checked above).
    unsafe { avx2_kernel(weights, groups, pairs, sums) }
}

#[target_feature(enable = "avx2")]
fn avx2_kernel(weights: &[i8], groups: usize, pairs: &[i32], sums: &mut [i32]) {
    let block = &weights[..groups * STEP];
    let out = &mut sums[..pairs.len() / groups * BLOCK];
    let mut tiles = pairs.chunks_exact(ROWS * groups);
    let mut outs = out.chunks_exact_mut(ROWS * BLOCK);
    for (x, out) in (&mut tiles).zip(&mut outs) {
        let (x01, x23) = x.split_at(2 * groups);
        let (x0, x1) = x01.split_at(groups);
        let (x2, x3) = x23.split_at(groups);
        // Outputs 0–7 and 8–15 of each row.
        let mut acc = [[_mm256_setzero_si256(); 2]; ROWS];
        for ((((step, &a), &b), &c), &d) in block.chunks_exact(STEP).zip(x0).zip(x1).zip(x2).zip(x3)
        {
            let w = widen_256(step);
            for (acc, x) in acc.iter_mut().zip([a, b, c, d]) {
                let x = _mm256_set1_epi32(x);
                acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(x, w[0]));
                acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(x, w[1]));
            }
        }
        for (a, out) in acc.iter().zip(out.chunks_exact_mut(BLOCK)) {
            store_256(out, *a);
        }
    }
    for (x, out) in tiles
        .remainder()
        .chunks_exact(groups)
        .zip(outs.into_remainder().chunks_exact_mut(BLOCK))
    {
        let mut acc = [_mm256_setzero_si256(); 2];
        for (step, &a) in block.chunks_exact(STEP).zip(x) {
            let (w, x) = (widen_256(step), _mm256_set1_epi32(a));
            acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(x, w[0]));
            acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(x, w[1]));
        }
        store_256(out, acc);
    }
}

/// One step's 32 weights widened to 16 bits: outputs 0–7, then 8–15.
#[target_feature(enable = "avx2")]
fn widen_256(step: &[i8]) -> [__m256i; 2] {
    let (lo, hi) = step[..STEP].split_at(STEP / 2);
    // SAFETY: `lo` and `hi` are 16 bytes each, the width of the loads.
    unsafe {
        [
            _mm256_cvtepi8_epi16(_mm_loadu_si128(lo.as_ptr().cast())),
            _mm256_cvtepi8_epi16(_mm_loadu_si128(hi.as_ptr().cast())),
        ]
    }
}

#[target_feature(enable = "avx2")]
fn store_256(out: &mut [i32], v: [__m256i; 2]) {
    let (lo, hi) = out[..BLOCK].split_at_mut(BLOCK / 2);
    // SAFETY: `lo` and `hi` are 8 i32 each, the width of the stores.
    unsafe {
        _mm256_storeu_si256(lo.as_mut_ptr().cast(), v[0]);
        _mm256_storeu_si256(hi.as_mut_ptr().cast(), v[1]);
    }
}
