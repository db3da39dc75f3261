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

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
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
}
