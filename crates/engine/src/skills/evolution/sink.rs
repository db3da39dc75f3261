//! Counts main turns and session ends on their way to the recorder, to trigger skill
//! evolution and memory extraction.

use metaclaw_proxy::seams::{EndReason, SessionEvent, TurnRecord, TurnSink, TurnType};

use super::worker::Evolution;
use crate::events::{EngineEvent, Events};
use crate::memory::Memory;
use crate::recorder::RecorderHandle;

pub struct LearningSink {
    pub recorder: RecorderHandle,
    pub evolution: Option<Evolution>,
    pub memory: Option<Memory>,
    /// Every turn is announced (the dashboard's live count), and a provider refusing the
    /// key too (a notification).
    pub events: Events,
}

impl TurnSink for LearningSink {
    fn turn_finished(&self, turn: TurnRecord) {
        if turn.turn_type == TurnType::Main && (200..300).contains(&turn.status) {
            if let Some(evolution) = &self.evolution {
                evolution.main_turn(&turn.session_id);
            }
            if let Some(memory) = &self.memory {
                memory.main_turn(&turn.session_id);
            }
        }
        announce(&self.events, &turn);
        self.recorder.turn_finished(turn);
    }

    fn queue_depth(&self) -> usize {
        self.recorder.queue_depth()
    }

    fn session_event(&self, event: &SessionEvent) {
        self.recorder.session_event(event);
        // At shutdown there is no time for a model call; those turns wait for a later
        // trigger (a manual one, or the session resumed).
        if let SessionEvent::Ended {
            session_id, reason, ..
        } = event
            && *reason != EndReason::Shutdown
        {
            if let Some(evolution) = &self.evolution {
                evolution.session_ended(session_id);
            }
            if let Some(memory) = &self.memory {
                memory.session_ended(session_id);
            }
        }
    }
}

/// `turn`, and `upstream_auth_failed` when the provider answered 401/403 (MetaClaw's own
/// key check refuses before a turn exists, so a recorded 401/403 came from the upstream).
fn announce(events: &Events, turn: &TurnRecord) {
    if matches!(turn.status, 401 | 403) && turn.error.is_some() {
        events.emit(EngineEvent::UpstreamAuthFailed {
            upstream: turn.upstream.clone(),
            status: turn.status,
        });
    }
    let at_ms = turn
        .started_at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    events.emit(EngineEvent::Turn {
        at_ms,
        model: turn.model.clone(),
        status: turn.status,
        overhead_ms: turn.overhead_ms,
    });
}
