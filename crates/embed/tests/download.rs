//! Downloading pinned model files from a local HTTP server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::{StatusCode, Uri};
use common::{NAME, model, scratch, shared_store};
use metaclaw_embed::{DEFAULT_MANIFEST, EmbedError, Manifest, ManifestFile, ModelStore};
use sha2::{Digest, Sha256};

const FILES: [&str; 4] = [
    "config.json",
    "tokenizer.json",
    "model.safetensors",
    "1_Pooling/config.json",
];

/// Serves `files` by path; the first `failures` requests of `flaky` get a 503.
#[derive(Clone, Default)]
struct Server {
    files: Arc<HashMap<String, Vec<u8>>>,
    flaky: Option<String>,
    failures: usize,
    requests: Arc<AtomicUsize>,
}

impl Server {
    /// Starts it on 127.0.0.1 and returns the base URL.
    async fn start(self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().fallback(move |uri: Uri| {
            let server = self.clone();
            async move { server.serve(uri.path()) }
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/repo/resolve/pinned")
    }

    fn serve(&self, path: &str) -> Result<Vec<u8>, StatusCode> {
        let path = path
            .strip_prefix("/repo/resolve/pinned/")
            .ok_or(StatusCode::NOT_FOUND)?;
        if self.flaky.as_deref() == Some(path)
            && self.requests.fetch_add(1, Ordering::SeqCst) < self.failures
        {
            return Err(StatusCode::SERVICE_UNAVAILABLE);
        }
        self.files.get(path).cloned().ok_or(StatusCode::NOT_FOUND)
    }
}

fn test_model_files() -> HashMap<String, Vec<u8>> {
    let dir = &shared_store().1;
    FILES
        .iter()
        .map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap()))
        .collect()
}

/// A manifest pinning the test model's files as they are.
fn manifest_for(files: &HashMap<String, Vec<u8>>) -> Manifest {
    let pinned = FILES
        .iter()
        .map(|f| {
            let bytes = &files[*f];
            let sha: String = Sha256::digest(bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            ManifestFile {
                path: Cow::Owned(f.to_string()),
                size: bytes.len() as u64,
                sha256: Cow::Owned(sha),
            }
        })
        .collect::<Vec<_>>();
    Manifest {
        name: Cow::Borrowed(NAME),
        base_url: Cow::Borrowed("http://127.0.0.1:9/unused"),
        files: Cow::Owned(pinned),
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

#[tokio::test]
async fn pinned_files_are_downloaded_verified_and_installed() {
    let files = test_model_files();
    let manifest = manifest_for(&files);
    let base = Server {
        files: Arc::new(files),
        ..Server::default()
    }
    .start()
    .await;
    let store = ModelStore::new(scratch("download-ok"));
    let installed = store
        .download(&client(), &manifest, Some(&base))
        .await
        .unwrap();
    assert_eq!(installed.name, NAME);
    assert!(!installed.is_default);
    let v = store.load(NAME).unwrap().embed_one("downloaded").unwrap();
    assert_eq!(v, model().embed_one("downloaded").unwrap());
}

#[tokio::test]
async fn a_server_error_is_retried() {
    let files = test_model_files();
    let manifest = manifest_for(&files);
    let requests = Arc::new(AtomicUsize::new(0));
    let base = Server {
        files: Arc::new(files),
        flaky: Some("tokenizer.json".into()),
        failures: 2,
        requests: requests.clone(),
    }
    .start()
    .await;
    let store = ModelStore::new(scratch("download-retry"));
    store
        .download(&client(), &manifest, Some(&base))
        .await
        .unwrap();
    assert_eq!(requests.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_checksum_mismatch_installs_nothing() {
    let files = test_model_files();
    let manifest = manifest_for(&files);
    let mut served = files.clone();
    // Same size, one byte changed: only the checksum can tell.
    served.get_mut("model.safetensors").unwrap()[5000] ^= 0xff;
    let base = Server {
        files: Arc::new(served),
        ..Server::default()
    }
    .start()
    .await;
    let root = scratch("download-mismatch");
    let store = ModelStore::new(&root);
    let err = store
        .download(&client(), &manifest, Some(&base))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, EmbedError::Checksum { file, .. } if file == "model.safetensors"),
        "{err}"
    );
    let message = err.to_string();
    assert!(message.contains("model.safetensors") && message.contains("nothing was installed"));
    assert!(store.status().unwrap().is_empty());
    assert_eq!(
        std::fs::read_dir(&root).unwrap().count(),
        0,
        "staging left behind"
    );
}

#[tokio::test]
async fn a_failed_download_leaves_the_previous_model() {
    let files = test_model_files();
    let manifest = manifest_for(&files);
    let root = scratch("download-previous");
    let store = ModelStore::new(&root);
    store.import(&shared_store().1, NAME).unwrap();
    let before = store.installed(NAME).unwrap();

    let mut served = files;
    served.remove("tokenizer.json");
    let base = Server {
        files: Arc::new(served),
        ..Server::default()
    }
    .start()
    .await;
    let err = store
        .download(&client(), &manifest, Some(&base))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("tokenizer.json") && message.contains("404"),
        "{message}"
    );
    assert_eq!(store.installed(NAME).unwrap(), before);
    store.load(NAME).unwrap();
}

#[tokio::test]
async fn the_default_manifest_refuses_files_that_are_not_the_pinned_ones() {
    // The test model's config.json is not the default model's: the first file fails.
    let mut served = HashMap::new();
    served.insert(
        "config.json".to_string(),
        std::fs::read(shared_store().1.join("config.json")).unwrap(),
    );
    let base = Server {
        files: Arc::new(served),
        ..Server::default()
    }
    .start()
    .await;
    let root = scratch("download-default");
    let store = ModelStore::new(&root);
    let err = store
        .download_default(&client(), Some(&base))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("config.json"), "{message}");
    assert!(message.contains("nothing was installed"), "{message}");
    assert!(store.installed(&DEFAULT_MANIFEST.name).unwrap().is_none());
}

#[test]
fn the_default_manifest_pins_every_file_the_model_needs() {
    let paths: Vec<&str> = DEFAULT_MANIFEST
        .files
        .iter()
        .map(|f| f.path.as_ref())
        .collect();
    for required in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert!(paths.contains(&required), "{required} not pinned");
    }
    for f in DEFAULT_MANIFEST.files.iter() {
        assert_eq!(f.sha256.len(), 64, "{}", f.path);
        assert!(f.sha256.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(f.size > 0);
    }
    assert!(
        DEFAULT_MANIFEST
            .base_url
            .starts_with("https://huggingface.co/")
    );
    assert!(DEFAULT_MANIFEST.total_size() > 400_000_000);
}
