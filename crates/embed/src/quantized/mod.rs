//! Stored vectors as 8-bit integers, one scale per vector, compared with a query by an
//! integer dot product.
//!
//! A turn compares its question with every indexed vector (20,000 memory units and 10,000
//! skills at most): a scan of 46 MB of f32 per question (4.8 ms on the 2-vCPU VM of the
//! benchmarks). As `i8` it reads a quarter of that, and an `i8 × i8` product summed in `i32`
//! vectorises without any target feature: 1.6 ms for the same scan, and a quarter of the
//! memory. Compiled for AVX2 it was no faster (1.05 ms p50 either way, on an earlier VM). On
//! a CPU with AVX-512 VNNI, `x86.rs` multiplies and sums 64 bytes per instruction, and the scan
//! takes a quarter of the time (`examples/scan_bench.rs` on an AMD EPYC of family 25: 0.26-0.36
//! ms p50 against 1.06-1.12 ms), with the same integer sums to the bit. For unit vectors of a
//! few hundred dimensions a cosine moves by well under 0.01 (tested below), far less than what
//! separates a match from a miss.

#[cfg(target_arch = "x86_64")]
mod x86;

/// The largest magnitude a component is scaled to.
const LEVELS: f32 = 127.0;
/// Independent integer sums, so the compiler can keep them in vector registers.
const LANES: usize = 16;

/// Vectors of one length, each stored as `i8` components and its scale.
#[derive(Debug, Clone, Default)]
pub struct QuantizedVectors {
    dims: usize,
    data: Vec<i8>,
    scales: Vec<f32>,
    /// Each vector's sum of codes, which the VNNI scan takes back off its shifted products.
    sums: Vec<i32>,
}

impl QuantizedVectors {
    /// An empty set; its length is that of the first vector pushed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `v`. A vector of another length than the first, or with a component that is not
    /// finite, is refused (`false`): it cannot be compared with the rest.
    pub fn push(&mut self, v: &[f32]) -> bool {
        if v.is_empty() || (self.dims != 0 && v.len() != self.dims) {
            return false;
        }
        let Some((codes, scale)) = quantize(v) else {
            return false;
        };
        self.dims = v.len();
        self.sums.push(codes.iter().map(|&c| i32::from(c)).sum());
        self.data.extend_from_slice(&codes);
        self.scales.push(scale);
        true
    }

    pub fn len(&self) -> usize {
        self.scales.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Length of every vector; 0 while empty.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The dot product of `query` with every stored vector, in order (the cosine when both
    /// are unit vectors). Empty when `query` has another length.
    pub fn dots(&self, query: &[f32]) -> Vec<f32> {
        if query.len() != self.dims || self.dims == 0 {
            return Vec::new();
        }
        let Some((q, q_scale)) = quantize(query) else {
            return vec![0.0; self.len()];
        };
        let mut sums = vec![0_i32; self.len()];
        self.int_dots(&q, &mut sums);
        sums.iter()
            .zip(&self.scales)
            .map(|(dot, scale)| *dot as f32 * q_scale * scale)
            .collect()
    }

    /// The integer dot product of the codes `q` with every stored vector, into `out`.
    fn int_dots(&self, q: &[i8], out: &mut [i32]) {
        #[cfg(target_arch = "x86_64")]
        if x86::dots(q, &self.data, self.dims, &self.sums, out) {
            return;
        }
        for (v, o) in self.data.chunks_exact(self.dims).zip(out) {
            *o = int_dot(q, v);
        }
    }
}

/// Components scaled so the largest is ±127, and the factor back; `None` for a vector with a
/// component that is not finite.
fn quantize(v: &[f32]) -> Option<(Vec<i8>, f32)> {
    let max = v
        .iter()
        .try_fold(0.0_f32, |m, x| x.is_finite().then_some(m.max(x.abs())))?;
    if max == 0.0 {
        return Some((vec![0; v.len()], 0.0));
    }
    let to_code = LEVELS / max;
    // `as` saturates, and the rounded value is within ±127 anyway.
    let codes = v.iter().map(|x| (x * to_code).round() as i8).collect();
    Some((codes, max / LEVELS))
}

fn int_dot(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0_i32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: i32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for ((s, x), y) in acc.iter_mut().zip(x).zip(y) {
            *s += i32::from(*x) * i32::from(*y);
        }
    }
    acc.iter().sum::<i32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u32, dims: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dims)
            .map(|i| ((i as f32 + 1.0) * (seed as f32 * 0.7 + 0.3)).sin())
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    fn exact(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn cosines_stay_within_a_hundredth_of_the_exact_ones() {
        for dims in [7, 16, 384, 1024] {
            let stored: Vec<Vec<f32>> = (0..50).map(|s| unit(s, dims)).collect();
            let mut q = QuantizedVectors::new();
            for v in &stored {
                assert!(q.push(v));
            }
            for seed in 100..110 {
                let query = unit(seed, dims);
                let got = q.dots(&query);
                assert_eq!(got.len(), stored.len());
                for (g, v) in got.iter().zip(&stored) {
                    let want = exact(&query, v);
                    assert!((g - want).abs() < 0.01, "dims {dims}: {g} vs {want}");
                }
            }
        }
    }

    #[test]
    fn a_vector_of_another_length_or_not_finite_is_refused() {
        let mut q = QuantizedVectors::new();
        assert!(q.push(&[0.6, 0.8]));
        assert!(!q.push(&[1.0, 0.0, 0.0]));
        assert!(!q.push(&[f32::NAN, 1.0]));
        assert!(!q.push(&[]));
        assert_eq!((q.len(), q.dims()), (1, 2));
        assert!(q.dots(&[1.0]).is_empty(), "a query of another length");
        let d = q.dots(&[1.0, 0.0]);
        assert!((d[0] - 0.6).abs() < 0.01, "{d:?}");
        assert_eq!(
            q.dots(&[0.0, 0.0]),
            [0.0],
            "a zero query is close to nothing"
        );
    }

    #[test]
    fn the_scan_gives_the_plain_sums_for_every_length_and_count() {
        // Lengths around the 64-byte step, counts around the four vectors done together;
        // codes at both ends of the range, where a shifted product is largest.
        for dims in [1, 63, 64, 65, 128, 384, 1536] {
            for count in [1, 3, 4, 5, 9] {
                let mut q = QuantizedVectors::new();
                let mut codes = Vec::new();
                for s in 0..count {
                    let v: Vec<f32> = (0..dims)
                        .map(|i| match (i + s) % 5 {
                            0 => 1.0,
                            1 => -1.0,
                            _ => ((i * 31 + s * 7) as f32).sin(),
                        })
                        .collect();
                    codes.push(quantize(&v).unwrap().0);
                    assert!(q.push(&v));
                }
                let query: Vec<i8> = (0..dims)
                    .map(|i| match i % 3 {
                        0 => 127,
                        1 => -127,
                        _ => (i % 200) as i8,
                    })
                    .collect();
                let mut got = vec![0; count];
                q.int_dots(&query, &mut got);
                let want: Vec<i32> = codes.iter().map(|c| int_dot(&query, c)).collect();
                assert_eq!(got, want, "{dims} dims, {count} vectors");
            }
        }
    }

    #[test]
    fn the_integer_dot_matches_the_plain_sum_for_every_length() {
        for n in [0, 1, 15, 16, 17, 384, 390] {
            let a: Vec<i8> = (0..n).map(|i| (i * 37 % 255) as i8).collect();
            let b: Vec<i8> = (0..n).map(|i| (i * 11 % 255) as i8).collect();
            let plain: i32 = a.iter().zip(&b).map(|(x, y)| *x as i32 * *y as i32).sum();
            assert_eq!(int_dot(&a, &b), plain, "length {n}");
        }
    }
}
