//! The learning service: connects the training backend in the background, serves turns
//! from the current sampler, judges samples and trains. Cheap to clone.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use metaclaw_learn::tokenizer::ChatTokenizer;
use metaclaw_learn::{Backend, SampleStore, Trainer};
use tokio::sync::Notify;

use super::settings::RlSettings;
use crate::events::Events;

/// Where the connection to the backend stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    Connecting,
    Ready,
    /// Why the trained model cannot serve; turns go to the upstream LLM meanwhile.
    Unavailable(String),
}

/// What exists once the backend is connected.
pub struct Ready {
    pub backend: Arc<dyn Backend>,
    pub tokenizer: Arc<ChatTokenizer>,
    pub trainer: Arc<Trainer>,
    /// Token ids that end a reply (`<|im_end|>`, the EOS token).
    pub stop_ids: Vec<u32>,
    /// Their text, stripped from the decoded reply.
    pub end_markers: Vec<String>,
}

/// The skill library's generation now (samples of an older one are dropped).
pub type Generation = Arc<dyn Fn() -> u64 + Send + Sync>;

pub(super) struct Inner {
    pub settings: RlSettings,
    pub samples: SampleStore,
    pub ready: OnceLock<Ready>,
    pub link: Mutex<Link>,
    /// The latest judge or teacher failure, cleared by the next success.
    pub judge_error: Mutex<Option<String>>,
    pub sampled: AtomicU64,
    pub fallback: AtomicU64,
    pub training: AtomicBool,
    pub wake_judge: Notify,
    pub wake_trainer: Notify,
    /// Sessions that ended, handed from the (non-blocking) session hook to the judge loop.
    pub ended: Mutex<Vec<String>>,
    pub generation: OnceLock<Generation>,
    pub graders: tokio::sync::Mutex<super::loops::Graders>,
    pub events: Events,
}

#[derive(Clone)]
pub struct Learning {
    pub(super) inner: Arc<Inner>,
}

impl Learning {
    /// Opens the sample store; nothing connects until [`Learning::spawn`].
    pub fn new(settings: RlSettings, events: Events) -> Result<Self, metaclaw_learn::LearnError> {
        let samples = SampleStore::open(&settings.db)?;
        let graders = tokio::sync::Mutex::new(super::loops::Graders::build(&settings));
        Ok(Self {
            inner: Arc::new(Inner {
                settings,
                samples,
                ready: OnceLock::new(),
                link: Mutex::new(Link::Connecting),
                judge_error: Mutex::new(None),
                sampled: AtomicU64::new(0),
                fallback: AtomicU64::new(0),
                training: AtomicBool::new(false),
                wake_judge: Notify::new(),
                wake_trainer: Notify::new(),
                ended: Mutex::new(Vec::new()),
                generation: OnceLock::new(),
                graders,
                events,
            }),
        })
    }

    pub fn link(&self) -> Link {
        lock(&self.inner.link).clone()
    }

    pub fn settings(&self) -> &RlSettings {
        &self.inner.settings
    }

    /// A session ended: its last sample is judged without a follow-up. Never blocks.
    pub fn session_ended(&self, session_id: &str) {
        lock(&self.inner.ended).push(session_id.to_owned());
        self.inner.wake_judge.notify_one();
    }

    pub(super) fn set_link(&self, link: Link) {
        *lock(&self.inner.link) = link;
    }

    pub(super) fn generation(&self) -> u64 {
        self.inner.generation.get().map_or(0, |g| g())
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Waits `d` unless `shutdown` fires first; says whether to go on.
pub(super) async fn pause(d: Duration, shutdown: &tokio_util::sync::CancellationToken) -> bool {
    tokio::select! {
        () = shutdown.cancelled() => false,
        () = tokio::time::sleep(d) => true,
    }
}

pub(super) fn now_ms() -> i64 {
    crate::clock::now_ms()
}

pub(super) fn ordering() -> Ordering {
    Ordering::SeqCst
}
