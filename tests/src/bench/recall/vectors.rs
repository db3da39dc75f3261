//! The semantic source of a search: units close to the query in meaning, as `(unit id,
//! cosine)`, what `metaclaw_memory::search_with` takes as `similar`.
//!
//! Only [`NoVectors`] (purely lexical search) is used today. A local embedding model plugs
//! in through [`Embedded`]: give it a function from texts to vectors and it indexes the
//! units once per conversation and answers each query by brute-force cosine ([`nearest`]).

use anyhow::{Result, ensure};
use metaclaw_embed::QuantizedVectors;

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

/// Units embedded by `embed` (texts in, one vector per text out), searched by brute force
/// over 8-bit vectors, as the engine's index does.
pub struct Embedded<F> {
    name: String,
    embed: F,
    ids: Vec<String>,
    vectors: QuantizedVectors,
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
            vectors: QuantizedVectors::new(),
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
        self.ids.clear();
        self.vectors = QuantizedVectors::new();
        for ((id, _), v) in units.iter().zip(vectors) {
            // A unit whose vector cannot be compared is found by its words only.
            if let Some(v) = unit(v)
                && self.vectors.push(&v)
            {
                self.ids.push(id.clone());
            }
        }
        Ok(())
    }

    fn similar(&mut self, query: &str, k: usize) -> Result<Vec<(String, f32)>> {
        let q = (self.embed)(&[query])?;
        let Some(q) = q.into_iter().next().and_then(unit) else {
            return Ok(Vec::new());
        };
        Ok(nearest(&q, &self.vectors, k)
            .into_iter()
            .filter_map(|(i, c)| self.ids.get(i).map(|id| (id.clone(), c)))
            .collect())
    }
}

/// `v` scaled to unit length; `None` for a zero or non-finite vector.
fn unit(v: Vec<f32>) -> Option<Vec<f32>> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm.is_finite() && norm > 0.0).then(|| v.into_iter().map(|x| x / norm).collect())
}

/// The `k` vectors closest to a unit `query` by cosine, closest first (ties by index), as
/// (index, cosine).
pub fn nearest(query: &[f32], vectors: &QuantizedVectors, k: usize) -> Vec<(usize, f32)> {
    let mut scored: Vec<(usize, f32)> = vectors.dots(query).into_iter().enumerate().collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(k);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_orders_by_cosine() {
        let mut vs = QuantizedVectors::new();
        for v in [[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.8, 0.6]] {
            assert!(vs.push(&unit(v.to_vec()).unwrap()));
        }
        let q = unit(vec![1.0, 0.1]).unwrap();
        let got = nearest(&q, &vs, 2);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [0, 3]);
        assert!(unit(vec![0.0, 0.0]).is_none());
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
