//! The large library by meaning: installs an embedding model into a seeded home and fills
//! its vector cache for every skill and for the memory units the engine indexes, with the
//! same model and the same cache keys the engine uses. The engine then builds its indexes
//! from the cache at start instead of embedding 30,000 texts while it is being measured.
//!
//! A skill's vector is the model's vector of its name and description, cached under the key
//! of its whole embedding text: the whole text (256 tokens) takes about 100 ms per skill on a
//! 2-vCPU machine, so 10,000 skills would take a quarter of an hour to seed. The vectors are
//! the model's own, of text about the skill; retrieval's cost does not depend on which.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use metaclaw_embed::{DEFAULT_MANIFEST, ModelStore};
use metaclaw_skills::Library;
use metaclaw_skills::retrieval::{content_hash, embedding_text};
use metaclaw_store::Store;

use super::learning::http;
use super::procs::Proxy;

/// The most memory units of a scope the engine indexes by meaning (its `MAX_INDEXED`).
const INDEXED_UNITS: u32 = 20_000;
const BATCH: usize = 64;

/// What was installed and cached.
#[derive(Debug, Clone)]
pub struct Prefilled {
    pub model_id: String,
    pub vectors: usize,
}

/// Imports the model at `model` (a folder or zip in the sentence-transformers layout) into
/// `home` as the engine's default model, and caches vectors for `home`'s skills and memory
/// units (scope `default`).
pub fn prefill(home: &Path, model: &Path) -> Result<Prefilled> {
    let store = ModelStore::new(home.join("models").join("embeddings"));
    store
        .import(model, &DEFAULT_MANIFEST.name)
        .with_context(|| format!("importing {}", model.display()))?;
    let embedder = store.load(&DEFAULT_MANIFEST.name)?;
    let model_id = embedder.model_id().to_owned();

    let library = Library::load(&[home.join("skills")]);
    // (cache key, text embedded for it)
    let mut texts: Vec<(String, String)> = library
        .enabled()
        .map(|s| {
            let head = format!("{}\n{}", s.name, s.description);
            (content_hash(&embedding_text(s)), head)
        })
        .collect();
    let mut db = Store::open(&home.join("metaclaw.db"))?;
    let units =
        metaclaw_memory::db::active_in_scope(db.connection(), "default", None, INDEXED_UNITS)?;
    texts.extend(
        units
            .into_iter()
            .map(|u| (content_hash(&u.content), u.content)),
    );

    let mut seen = HashSet::new();
    let todo: Vec<(String, String)> = texts
        .into_iter()
        .filter(|(h, _)| seen.insert(h.clone()))
        .collect();
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    for chunk in todo.chunks(BATCH) {
        let inputs: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = embedder.embed(&inputs)?;
        for ((hash, _), v) in chunk.iter().zip(vectors) {
            db.put_embedding(hash, &model_id, &v, now_ms)?;
        }
    }
    Ok(Prefilled {
        model_id,
        vectors: todo.len(),
    })
}

/// Returns once `proxy` retrieves by meaning: its model is loaded, its skill index holds at
/// least `skills` skills, and a memory search ranks a unit by meaning. The first memory
/// search starts the memory index's build, so it is asked again until one does.
pub async fn wait_for_indexes(proxy: &Proxy, skills: usize, within: Duration) -> Result<()> {
    let token = std::fs::read_to_string(proxy.home().join("run/admin_token"))
        .context("reading the admin token")?;
    let token = token.trim();
    let deadline = Instant::now() + within;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tick.tick().await;
        let skills_ready = http::admin(proxy.addr, token, "/api/skills/search?q=pytest")
            .await
            .is_ok_and(|v| v["semantic_index_skills"].as_u64() >= Some(skills as u64));
        let memory_ready = skills_ready
            && http::admin(proxy.addr, token, "/api/memory/search?q=flaky%20pipeline")
                .await
                .is_ok_and(|v| {
                    v.as_array().is_some_and(|hits| {
                        hits.iter()
                            .any(|h| h["components"]["semantic"].as_f64() > Some(0.0))
                    })
                });
        if memory_ready {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "not retrieving by meaning after {within:?} (skills index ready: {skills_ready})"
            );
        }
    }
}
