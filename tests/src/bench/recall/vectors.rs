//! The semantic source of a search: units close to the query in meaning, as `(unit id,
//! cosine)`, what `metaclaw_memory::search_with` takes as `similar`.
//!
//! Only [`NoVectors`] (purely lexical search) is used today. A local embedding model plugs
//! in through [`Embedded`]: give it a function from texts to vectors and it indexes the
//! units once per conversation and answers each query by brute-force cosine ([`nearest`]).

use anyhow::{Result, ensure};

/// Nearest units to a query, for one conversation at a time.
pub trait QueryVectors {
    /// A short name for reports.
    fn name(&self) -> &str;

    /// Whether it returns anything: searches then use the hybrid policy.
    fn is_active(&self) -> bool {
        true
    }

    /// Replaces the indexed units with `units`, as (unit id, text); called once per
    /// conversation, before its questions.
    fn index(&mut self, units: &[(String, String)]) -> Result<()>;

    /// At most `k` units closest to `query`, closest first, as (unit id, cosine).
    fn similar(&mut self, query: &str, k: usize) -> Result<Vec<(String, f32)>>;
}

/// No semantic source: search is lexical only.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoVectors;

impl QueryVectors for NoVectors {
    fn name(&self) -> &str {
        "none"
    }

    fn is_active(&self) -> bool {
        false
    }

    fn index(&mut self, _units: &[(String, String)]) -> Result<()> {
        Ok(())
    }

    fn similar(&mut self, _query: &str, _k: usize) -> Result<Vec<(String, f32)>> {
        Ok(Vec::new())
    }
}

/// Units embedded by `embed` (texts in, one vector per text out), searched by brute force.
pub struct Embedded<F> {
    name: String,
    embed: F,
    ids: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

impl<F> Embedded<F>
where
    F: FnMut(&[&str]) -> Result<Vec<Vec<f32>>>,
{
    pub fn new(name: impl Into<String>, embed: F) -> Self {
        Embedded {
            name: name.into(),
            embed,
            ids: Vec::new(),
            vectors: Vec::new(),
        }
    }
}

impl<F> QueryVectors for Embedded<F>
where
    F: FnMut(&[&str]) -> Result<Vec<Vec<f32>>>,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn index(&mut self, units: &[(String, String)]) -> Result<()> {
        let texts: Vec<&str> = units.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = (self.embed)(&texts)?;
        ensure!(
            vectors.len() == units.len(),
            "the embedder returned {} vectors for {} texts",
            vectors.len(),
            units.len()
        );
        self.ids = units.iter().map(|(id, _)| id.clone()).collect();
        self.vectors = vectors;
        Ok(())
    }

    fn similar(&mut self, query: &str, k: usize) -> Result<Vec<(String, f32)>> {
        let q = (self.embed)(&[query])?;
        let Some(q) = q.first() else {
            return Ok(Vec::new());
        };
        Ok(nearest(q, &self.vectors, k)
            .into_iter()
            .filter_map(|(i, c)| self.ids.get(i).map(|id| (id.clone(), c)))
            .collect())
    }
}

/// Cosine similarity; 0 when either vector is zero or their lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0_f32, 0.0_f32, 0.0_f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// The `k` vectors closest to `query` by cosine, closest first (ties by index), as (index,
/// cosine).
pub fn nearest(query: &[f32], vectors: &[Vec<f32>], k: usize) -> Vec<(usize, f32)> {
    let mut scored: Vec<(usize, f32)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (i, cosine(query, v)))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(k);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_orders_by_cosine() {
        let vs = vec![
            vec![1.0, 0.0],
            vec![0.0, 1.0],
            vec![1.0, 1.0],
            vec![0.0, 0.0],
        ];
        let got = nearest(&[1.0, 0.1], &vs, 2);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [0, 2]);
        assert!((cosine(&[2.0, 0.0], &[5.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0], &[1.0, 2.0]), 0.0);
    }

    #[test]
    fn an_embedding_function_plugs_in() {
        // A toy embedder: counts of 'a' and 'b'.
        let embed = |texts: &[&str]| -> Result<Vec<Vec<f32>>> {
            Ok(texts
                .iter()
                .map(|t| vec![t.matches('a').count() as f32, t.matches('b').count() as f32])
                .collect())
        };
        let mut v = Embedded::new("toy", embed);
        let units = [
            ("u1".to_owned(), "aaa".to_owned()),
            ("u2".to_owned(), "bbb".to_owned()),
        ];
        v.index(&units).unwrap();
        let got = v.similar("b", 1).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, "u2");
    }
}
