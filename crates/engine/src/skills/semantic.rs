//! The semantic side of skill retrieval: one normalised vector per enabled skill, built in
//! the background after each library reload and attached to that library's snapshot.
//!
//! Vectors are cached in SQLite under the SHA-256 of the text they were computed from (see
//! `metaclaw_skills::retrieval::embedding_text`), so a restart or an edit to one skill only
//! embeds what changed. A failed build is retried with a backoff (30 s, doubling, at most
//! 10 min) for as long as its library is current; meanwhile retrieval stays lexical.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use metaclaw_embed::QuantizedVectors;
use metaclaw_skills::Library;
use metaclaw_skills::retrieval::{Fusion, Retriever, content_hash, embedding_text};
use metaclaw_store::{Store, StoreError};

use super::snapshot::Snapshot;
use crate::embeddings::{EmbedFailure, Embeddings, Priority, normalise};

/// Inputs per `/embeddings` call: OpenAI accepts up to 2,048, but smaller batches keep one
/// request short and let progress be saved as it goes.
const BATCH: usize = 64;
const RETRY_FIRST: Duration = Duration::from_secs(30);
const RETRY_MAX: Duration = Duration::from_secs(600);

/// How the semantic side is set up; `None` in template mode.
#[derive(Clone)]
pub struct SemanticSetup {
    /// The local model or the embeddings API (with the long timeout used for building the
    /// index).
    pub source: Embeddings,
    pub fusion: Fusion,
    /// `skills.min_similarity`.
    pub min_similarity: f32,
    pub db: PathBuf,
}

/// Skill vectors for one library, all of the same model and length, L2-normalised so a dot
/// product is the cosine; 8-bit, as the memory index ([`QuantizedVectors`]).
#[derive(Debug)]
pub struct SemanticIndex {
    pub model: String,
    names: Vec<String>,
    vectors: QuantizedVectors,
    /// Each vector's doc id in the snapshot's retriever ([`Self::bound_to`]): a turn's
    /// fusion then looks nothing up by name.
    docs: Vec<Option<u32>>,
}

impl SemanticIndex {
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// This index with each vector's doc id in `retriever` (the retriever of the library it
    /// was built from).
    pub fn bound_to(mut self, retriever: &Retriever) -> Self {
        self.docs = retriever.doc_ids(self.names.iter().map(String::as_str));
        self
    }

    /// The cosine of a normalised `query` to every skill the retriever ranks, by doc id;
    /// empty if the lengths disagree.
    pub fn similarities(&self, query: &[f32]) -> Vec<(u32, f32)> {
        self.docs
            .iter()
            .zip(self.vectors.dots(query))
            .filter_map(|(doc, cosine)| Some(((*doc)?, cosine)))
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SemanticError {
    #[error(transparent)]
    Embed(#[from] EmbedFailure),
    #[error("embedding cache: {0}")]
    Store(#[from] StoreError),
    #[error("the embeddings have different lengths ({0} and {1}); is the model consistent?")]
    Dims(usize, usize),
    #[error("internal task failed: {0}")]
    Task(String),
}

/// Builds `snapshot`'s index and attaches it, retrying with a backoff until it succeeds.
/// Runs as its own task, aborted when a newer library replaces this one. One warning per
/// library, not one per retry.
pub async fn fill(snapshot: Arc<Snapshot>, setup: SemanticSetup) {
    let mut wait = RETRY_FIRST;
    let mut warned = false;
    loop {
        match build(&snapshot.library, &setup).await {
            Ok((index, embedded)) => {
                tracing::info!(
                    skills = index.len(),
                    embedded,
                    generation = snapshot.generation,
                    "semantic skill index ready"
                );
                snapshot.attach(index);
                return;
            }
            // The local model is not in yet: build as soon as it is (its status says why).
            Err(SemanticError::Embed(EmbedFailure::NotReady(_))) => {
                setup.source.ready().await;
                continue;
            }
            Err(e) if !warned => {
                warned = true;
                tracing::warn!(
                    error = %e,
                    retry_in_secs = wait.as_secs(),
                    "skill embeddings unavailable; retrieval stays lexical until they load"
                );
            }
            Err(e) => tracing::debug!(error = %e, "skill embeddings still unavailable"),
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RETRY_MAX);
    }
}

/// The index for `library` and how many vectors had to be computed (the rest came from the
/// cache). Each batch is saved as soon as it arrives, so a later failure loses nothing.
pub async fn build(
    library: &Arc<Library>,
    setup: &SemanticSetup,
) -> Result<(SemanticIndex, usize), SemanticError> {
    let model = setup.source.model();
    if model.is_empty() {
        return Err(SemanticError::Embed(EmbedFailure::NotReady(
            "not loaded".into(),
        )));
    }
    let (names, texts, hashes, mut vectors) = {
        let (library, db, model) = (Arc::clone(library), setup.db.clone(), model.clone());
        blocking(move || {
            let store = Store::open(&db)?;
            let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for skill in library.enabled() {
                let text = embedding_text(skill);
                let hash = content_hash(&text);
                out.3.push(store.embedding(&hash, &model)?);
                out.0.push(skill.name.clone());
                out.1.push(text);
                out.2.push(hash);
            }
            Ok(out)
        })
        .await?
    };
    let missing: Vec<usize> = (0..names.len()).filter(|&i| vectors[i].is_none()).collect();
    for chunk in missing.chunks(BATCH) {
        let inputs: Vec<String> = chunk.iter().map(|&i| texts[i].clone()).collect();
        let got = setup.source.embed(&inputs, Priority::Background).await?;
        let rows: Vec<(String, Vec<f32>)> =
            chunk.iter().map(|&i| hashes[i].clone()).zip(got).collect();
        let (db, model) = (setup.db.clone(), model.clone());
        let rows = blocking(move || {
            let mut store = Store::open(&db)?;
            let now = now_ms();
            for (hash, v) in &rows {
                store.put_embedding(hash, &model, v, now)?;
            }
            Ok(rows)
        })
        .await?;
        for (&i, (_, v)) in chunk.iter().zip(rows) {
            vectors[i] = Some(v);
        }
    }
    let mut index = SemanticIndex {
        model,
        names: Vec::with_capacity(names.len()),
        vectors: QuantizedVectors::new(),
        docs: Vec::new(),
    };
    for (name, v) in names.into_iter().zip(vectors) {
        // A zero vector (or one the API left out) cannot rank; that skill stays lexical.
        let Some(v) = v.and_then(normalise) else {
            continue;
        };
        if !index.vectors.push(&v) {
            return Err(SemanticError::Dims(index.vectors.dims(), v.len()));
        }
        index.names.push(name);
    }
    Ok((index, missing.len()))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, SemanticError> + Send + 'static,
) -> Result<T, SemanticError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| SemanticError::Task(e.to_string()))?
}

fn now_ms() -> i64 {
    crate::clock::now_ms()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarities_are_cosines_by_doc_id_to_same_length_vectors() {
        let skill = |name: &str| {
            let text = format!("---\nname: {name}\ndescription: Use for {name}.\n---\n# {name}\n");
            metaclaw_skills::parse_skill(&text, None).unwrap().0
        };
        // The retriever's order differs from the index's, and one name is not in it.
        let retriever = Retriever::new(
            &[skill("y"), skill("x")],
            metaclaw_skills::retrieval::RetrievalConfig::default(),
        );
        let a = normalise(vec![3.0, 4.0]).unwrap();
        let index = SemanticIndex {
            model: "m".into(),
            names: vec!["x".into(), "gone".into(), "y".into()],
            vectors: {
                let mut q = QuantizedVectors::new();
                assert!(q.push(&[1.0, 0.0]) && q.push(&[0.7, 0.7]) && q.push(&[0.0, 1.0]));
                q
            },
            docs: Vec::new(),
        }
        .bound_to(&retriever);
        let sims = index.similarities(&a);
        assert_eq!(sims.len(), 2, "{sims:?}");
        assert_eq!((sims[0].0, sims[1].0), (1, 0), "x is doc 1, y doc 0");
        assert!((sims[0].1 - 0.6).abs() < 0.01 && (sims[1].1 - 0.8).abs() < 0.01);
        assert!(
            index.similarities(&[1.0]).is_empty(),
            "another length is no match"
        );
    }
}
