//! The per-question vector scan at the size of the library benchmark: 20,000 memory units and
//! 10,000 skills of 384 dimensions, stored as 8-bit vectors, compared with one question.
//!
//!   cargo run --release -p metaclaw-embed --example scan_bench [ROUNDS]
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::Instant;

use metaclaw_embed::QuantizedVectors;

const DIMS: usize = 384;

/// A deterministic unit vector per seed (no model needed: the scan's cost does not depend on
/// what the vectors mean).
fn unit(seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v: Vec<f32> = (0..DIMS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let norm = v.iter().map(|c| c * c).sum::<f32>().sqrt();
    v.into_iter().map(|c| c / norm).collect()
}

fn filled(n: u64, from: u64) -> QuantizedVectors {
    let mut q = QuantizedVectors::new();
    for s in from..from + n {
        assert!(q.push(&unit(s)));
    }
    q
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().unwrap())
        .unwrap_or(500);
    let (units, skills) = (filled(20_000, 0), filled(10_000, 1_000_000));
    let mut times = Vec::with_capacity(rounds);
    let mut checksum = 0.0_f32;
    for r in 0..rounds {
        let query = unit(5_000_000 + r as u64);
        let start = Instant::now();
        let a = units.dots(&query);
        let b = skills.dots(&query);
        times.push(start.elapsed().as_secs_f64() * 1e3);
        checksum += a[r % a.len()] + b[r % b.len()];
    }
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    println!(
        "scan of 30,000 x {DIMS} (8-bit), {rounds} questions: p50 {:.3} ms, p99 {:.3} ms (checksum {checksum:.3})",
        at(0.5),
        at(0.99)
    );
}
