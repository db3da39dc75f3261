//! Comparing embeddings: vectors are L2-normalised once, so a dot product is the cosine
//! (the indexes compare them as 8-bit integers: `metaclaw_embed::QuantizedVectors`).

/// Scales `v` to unit length; `None` for a zero or non-finite vector, which cannot be
/// compared with anything.
pub fn normalise(mut v: Vec<f32>) -> Option<Vec<f32>> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return None;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_vectors_have_unit_length() {
        assert!(normalise(vec![0.0, 0.0]).is_none());
        assert!(normalise(vec![f32::NAN, 1.0]).is_none());
        let a = normalise(vec![3.0, 4.0]).unwrap();
        assert!((a[0] - 0.6).abs() < 1e-6 && (a[1] - 0.8).abs() < 1e-6);
    }
}
