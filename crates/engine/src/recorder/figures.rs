//! What MetaClaw measured of a turn (injected tokens, skills' memories, the upstream's usage)
//! reaches the recorder beside the turn: the sink in front of the learning sink queues the
//! figures first, then hands the turn on; the worker joins them by the turn's session and
//! start time.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use metaclaw_proxy::seams::{SessionEvent, TurnFigures, TurnRecord, TurnSink};

use super::{Message, RecorderHandle};

/// Figures waiting for their turn, by (session, start time).
pub(super) type FiguresKey = (String, SystemTime);

/// Figures whose turn never came (the queue shed it) are forgotten beyond this many.
const MAX_WAITING: usize = 4096;

/// Passes turns and events to `inner`, and each turn's figures to the recorder.
pub struct FiguresSink {
    pub inner: Arc<dyn TurnSink>,
    pub recorder: RecorderHandle,
}

impl TurnSink for FiguresSink {
    fn turn_finished(&self, turn: TurnRecord) {
        self.inner.turn_finished(turn);
    }

    fn turn_finished_with(&self, turn: TurnRecord, figures: TurnFigures) {
        // Queued before the turn, so the worker holds them when the turn arrives.
        self.recorder.queue(Message::Figures(
            (turn.session_id.clone(), turn.started_at),
            figures,
        ));
        self.inner.turn_finished(turn);
    }

    fn queue_depth(&self) -> usize {
        self.inner.queue_depth()
    }

    fn session_event(&self, event: &SessionEvent) {
        self.inner.session_event(event);
    }
}

/// The worker's side: figures held until their turn is converted.
#[derive(Default)]
pub(super) struct Waiting {
    by_turn: HashMap<FiguresKey, TurnFigures>,
}

impl Waiting {
    pub(super) fn hold(&mut self, key: FiguresKey, figures: TurnFigures) {
        if self.by_turn.len() >= MAX_WAITING {
            self.by_turn.clear();
        }
        self.by_turn.insert(key, figures);
    }

    pub(super) fn take(&mut self, turn: &TurnRecord) -> TurnFigures {
        self.by_turn
            .remove(&(turn.session_id.clone(), turn.started_at))
            .unwrap_or_default()
    }
}
