//! The local embedding model: loaded once from the model store, shared by every index and
//! the per-turn query, and computed off the runtime's workers.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use metaclaw_embed::{Embedder, ModelStore};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::source::{EmbedFailure, Priority};

/// How often a use of a model that is not loaded looks in its folder again, so a model
/// imported while the engine runs is picked up without a restart.
const LOOK_AGAIN_EVERY: Duration = Duration::from_secs(30);
/// A model that failed to load is only tried again this rarely: loading reads hundreds of
/// megabytes.
const RETRY_FAILED_EVERY: Duration = Duration::from_secs(600);

/// What the local model is doing, for `/api/status` and the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LocalState {
    /// Not downloaded or imported (yet).
    Missing {
        dir: String,
    },
    Downloading {
        from: String,
    },
    Loading,
    Ready {
        model_id: String,
        dimension: usize,
        size_bytes: u64,
        /// Byte-for-byte the default model MetaClaw's retrieval is tuned for.
        is_default: bool,
    },
    Failed {
        error: String,
    },
}

impl LocalState {
    /// One line for people.
    pub fn line(&self, name: &str) -> String {
        match self {
            LocalState::Missing { dir } => format!(
                "by words only: the local embedding model {name} is not installed in {dir} (run `metaclaw models download`, or `metaclaw models import PATH`)"
            ),
            LocalState::Downloading { from } => {
                format!(
                    "by words only while the local embedding model {name} downloads from {from}"
                )
            }
            LocalState::Loading => {
                format!("by words only while the local embedding model {name} loads")
            }
            LocalState::Ready {
                model_id,
                dimension,
                is_default,
                ..
            } => {
                let note = if *is_default {
                    ""
                } else {
                    ", not the default model"
                };
                format!(
                    "by meaning and words, with the local model {model_id} ({dimension} dimensions{note})"
                )
            }
            LocalState::Failed { error } => format!(
                "by words only: the local embedding model {name} does not work ({error}); `metaclaw models download` or `metaclaw models import PATH` replaces it"
            ),
        }
    }
}

pub struct LocalModel {
    store: ModelStore,
    name: String,
    embedder: RwLock<Option<Arc<Embedder>>>,
    state: Mutex<LocalState>,
    /// Becomes true once, when the model has loaded.
    ready: watch::Sender<bool>,
    /// One load at a time: a second one would read the weights twice.
    loading: Mutex<()>,
    last_look: Mutex<Instant>,
}

impl LocalModel {
    /// The model `name` in the store at `root`; nothing is read yet.
    pub fn new(root: PathBuf, name: &str) -> Arc<Self> {
        let dir = root.join(name).display().to_string();
        Arc::new(LocalModel {
            store: ModelStore::new(root),
            name: name.to_owned(),
            embedder: RwLock::new(None),
            state: Mutex::new(LocalState::Missing { dir }),
            ready: watch::Sender::new(false),
            loading: Mutex::new(()),
            last_look: Mutex::new(Instant::now()),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn store(&self) -> &ModelStore {
        &self.store
    }

    pub fn model_id(&self) -> Option<String> {
        self.embedder().map(|e| e.model_id().to_owned())
    }

    pub fn state(&self) -> LocalState {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(super) fn set_state(&self, state: LocalState) {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner) = state;
    }

    /// A download's progress or failure, unless a model is loaded (imported by hand while
    /// the download ran): then the download has nothing left to say, and `false` tells it
    /// to stop.
    pub(super) fn set_download_state(&self, state: LocalState) -> bool {
        let mut current = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if self.embedder().is_some() || matches!(*current, LocalState::Ready { .. }) {
            return false;
        }
        *current = state;
        true
    }

    fn embedder(&self) -> Option<Arc<Embedder>> {
        self.embedder
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Returns once the model has loaded (never, if it never does).
    pub async fn loaded(&self) {
        let mut rx = self.ready.subscribe();
        // Only a dropped sender ends this early, and `self` holds it.
        let _ = rx.wait_for(|ready| *ready).await;
    }

    /// Loads the installed model. `Ok(false)` when none is installed (or another load is
    /// under way). Blocking: reads and checks the weights.
    pub fn load_installed(&self) -> Result<bool, String> {
        if self.embedder().is_some() {
            return Ok(true);
        }
        let Ok(_one) = self.loading.try_lock() else {
            return Ok(false);
        };
        let installed = self.store.installed(&self.name).map_err(|e| {
            let error = e.to_string();
            self.set_state(LocalState::Failed {
                error: error.clone(),
            });
            error
        })?;
        let Some(installed) = installed else {
            let dir = self.store.root().join(&self.name).display().to_string();
            self.set_state(LocalState::Missing { dir });
            return Ok(false);
        };
        self.set_state(LocalState::Loading);
        let started = Instant::now();
        let embedder = match Embedder::load(&installed.dir) {
            Ok(e) => e,
            Err(e) => {
                let error = e.to_string();
                tracing::warn!(model = %self.name, error = %error, "the local embedding model does not load; skills and memories are found by their words only");
                self.set_state(LocalState::Failed {
                    error: error.clone(),
                });
                return Err(error);
            }
        };
        if let Some(warning) = installed.warning() {
            tracing::warn!("{warning}");
        }
        tracing::info!(
            model = embedder.model_id(),
            dimension = embedder.dimension(),
            size_mb = installed.size_bytes / 1_000_000,
            load_ms = started.elapsed().as_millis() as u64,
            "local embedding model loaded: skills and memories are found by meaning too"
        );
        self.set_state(LocalState::Ready {
            model_id: embedder.model_id().to_owned(),
            dimension: embedder.dimension(),
            size_bytes: installed.size_bytes,
            is_default: installed.is_default,
        });
        *self
            .embedder
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(embedder));
        self.ready.send_replace(true);
        Ok(true)
    }

    /// One vector per input. `Turn`: on a worker of the model's pool, which starts on it at
    /// once (a blocking thread would first wake, then hand it to a worker and wait for that
    /// one to wake too); skipped if no one waits any more. `Background`: on a blocking thread
    /// that hands it to the model's low-priority thread. Not loaded yet: fails at once (the
    /// caller stays lexical) and, now and then, looks in the folder again.
    pub async fn embed(
        self: &Arc<Self>,
        inputs: &[String],
        priority: Priority,
    ) -> Result<Vec<Vec<f32>>, EmbedFailure> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let Some(embedder) = self.embedder() else {
            self.look_again();
            return Err(EmbedFailure::NotReady(self.state().line(&self.name)));
        };
        let inputs = inputs.to_vec();
        let embedded = match priority {
            Priority::Turn => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                embedder.spawn(move |model| {
                    // The turn gave up (its timeout, or the client left): nothing to do.
                    if tx.is_closed() {
                        return;
                    }
                    let texts: Vec<&str> = inputs.iter().map(String::as_str).collect();
                    let _ = tx.send(model.embed(&texts));
                });
                rx.await.map_err(|_| {
                    EmbedFailure::Task("the embedding job ended without a vector".into())
                })?
            }
            Priority::Background => tokio::task::spawn_blocking(move || {
                let texts: Vec<&str> = inputs.iter().map(String::as_str).collect();
                embedder.embed_in_background(&texts)
            })
            .await
            .map_err(|e| EmbedFailure::Task(e.to_string()))?,
        };
        embedded.map_err(|e| EmbedFailure::Local(e.to_string()))
    }

    /// Looks for the model in its folder again, in the background, when the last look is old
    /// enough. A download in progress loads the model itself when it is done.
    fn look_again(self: &Arc<Self>) {
        let every = match self.state() {
            LocalState::Missing { .. } => LOOK_AGAIN_EVERY,
            LocalState::Failed { .. } => RETRY_FAILED_EVERY,
            _ => return,
        };
        {
            let mut last = self
                .last_look
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if last.elapsed() < every {
                return;
            }
            *last = Instant::now();
        }
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let _ = me.load_installed();
        });
    }
}
