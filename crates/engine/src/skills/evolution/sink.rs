//! Counts main turns and session ends on their way to the recorder, to trigger evolution.

use metaclaw_proxy::seams::{EndReason, SessionEvent, TurnRecord, TurnSink, TurnType};

use super::worker::Evolution;
use crate::recorder::RecorderHandle;

pub struct LearningSink {
    pub recorder: RecorderHandle,
    pub evolution: Option<Evolution>,
}

impl TurnSink for LearningSink {
    fn turn_finished(&self, turn: TurnRecord) {
        if let Some(evolution) = &self.evolution
            && turn.turn_type == TurnType::Main
            && (200..300).contains(&turn.status)
        {
            evolution.main_turn(&turn.session_id);
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
        if let (
            Some(evolution),
            SessionEvent::Ended {
                session_id, reason, ..
            },
        ) = (&self.evolution, event)
            && *reason != EndReason::Shutdown
        {
            evolution.session_ended(session_id);
        }
    }
}
