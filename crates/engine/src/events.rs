//! What happened in the engine, for the hosts that show it: the dashboard's live updates
//! (`/api/events`) and the desktop app's notifications. The host owns the bus so it outlives
//! an in-place restart of the engine.

use serde::Serialize;
use tokio::sync::broadcast;

/// Slow subscribers miss the oldest events rather than slowing the engine down.
const CAPACITY: usize = 256;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EngineEvent {
    /// The engine is serving on `addr` (first start and after every restart).
    Started { addr: String },
    /// A restart was asked for (new settings); the engine comes back on the same address.
    Restarting,
    /// A turn was served and recorded.
    Turn {
        at_ms: i64,
        model: String,
        status: u16,
        /// Time MetaClaw added on the request path, milliseconds.
        overhead_ms: f64,
    },
    /// Skill evolution wrote new skills to the library.
    SkillsLearned { names: Vec<String> },
    /// Skill evolution filed skills for approval (`skills.review: ask`); with no names, a
    /// proposal was approved or rejected (what waits changed, nothing new to tell).
    SkillProposed { names: Vec<String> },
    /// Memory gained, changed or lost units (extraction, consolidation, an edit).
    MemoryChanged,
    /// Retention ran: the database's size and what it keeps changed.
    StorageChanged,
    /// The provider refused MetaClaw's key.
    UpstreamAuthFailed { upstream: String, status: u16 },
    /// A training step finished (RL modes).
    TrainingFinished { step: u64, reward: Option<f64> },
    /// The WeChat channel moved on (`state` as `GET /api/wechat` names it); `qr` is the
    /// login link while a scan is awaited.
    Wechat {
        state: String,
        line: String,
        qr: Option<String>,
    },
    /// A newer MetaClaw is in the package's repository (or the manifest); `apply` says how
    /// to install it. Told once per version.
    UpdateAvailable { version: String, apply: String },
    /// The program file was replaced (a package upgrade): restarting runs `version`.
    RestartOffered { version: String },
}

#[derive(Debug, Clone)]
pub struct Events {
    tx: broadcast::Sender<EngineEvent>,
}

impl Default for Events {
    fn default() -> Self {
        Self::new()
    }
}

impl Events {
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(CAPACITY);
        Self { tx }
    }

    /// Never blocks; an event nobody listens to is dropped.
    pub fn emit(&self, event: EngineEvent) {
        let _ = self.tx.send(event);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.tx.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscribers_see_events_sent_after_they_subscribed() {
        let events = Events::new();
        events.emit(EngineEvent::Restarting);
        let mut rx = events.subscribe();
        events.emit(EngineEvent::MemoryChanged);
        assert_eq!(rx.try_recv().ok(), Some(EngineEvent::MemoryChanged));
        assert!(rx.try_recv().is_err());
    }
}
