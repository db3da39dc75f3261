//! Counts main turns and session ends on their way to the recorder, to trigger skill
//! evolution and memory extraction.

use metaclaw_proxy::seams::{EndReason, SessionEvent, TurnRecord, TurnSink, TurnType};

use super::worker::Evolution;
use crate::memory::Memory;
use crate::recorder::RecorderHandle;

pub struct LearningSink {
    pub recorder: RecorderHandle,
    pub evolution: Option<Evolution>,
    pub memory: Option<Memory>,
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
