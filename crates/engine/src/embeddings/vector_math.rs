//! Comparing embeddings: vectors are L2-normalised once, so a dot product is the cosine.

/// Scales `v` to unit length; `None` for a zero or non-finite vector, which cannot be
/// compared with anything.
pub fn normalise(mut v: Vec<f32>) -> Option<Vec<f32>> {
    let norm = dot(&v, &v).sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return None;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    Some(v)
}

/// Lanes summed independently. A plain `zip().sum()` is one chain of dependent additions
/// (floats are not reassociated), about four cycles per element; eight partial sums let the
/// compiler use vector registers, which makes a pass over 30,000 stored vectors (100,000
/// memory units' index and 10,000 skills) about ten times shorter.
const LANES: usize = 8;

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for ((s, x), y) in acc.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_vectors_compare_by_dot_product() {
        assert!(normalise(vec![0.0, 0.0]).is_none());
        assert!(normalise(vec![f32::NAN, 1.0]).is_none());
        let a = normalise(vec![3.0, 4.0]).unwrap();
        assert!((a[0] - 0.6).abs() < 1e-6 && (a[1] - 0.8).abs() < 1e-6);
        assert!((dot(&a, &[0.0, 1.0]) - 0.8).abs() < 1e-6);
    }

    #[test]
    fn dot_matches_the_plain_sum_for_every_length() {
        for n in [0, 1, 7, 8, 9, 384, 390] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "length {n}");
        }
    }
}
