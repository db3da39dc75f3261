//! Counts main turns and session ends on their way to the recorder, to trigger skill
//! evolution and memory extraction.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use metaclaw_proxy::seams::{EndReason, SessionEvent, TurnRecord, TurnSink, TurnType};

use crate::events::{EngineEvent, Events};
use crate::memory::Memory;
use crate::recorder::RecorderHandle;
use crate::skills::evolution::Evolution;

pub struct LearningSink {
    pub recorder: RecorderHandle,
    pub evolution: Option<Evolution>,
    pub memory: Option<Memory>,
    /// Every turn is announced (the dashboard's live count), and a provider refusing the
    /// key too (a notification).
    pub events: Events,
    /// Weight learning (modes `rl`, `madmax`): an ended session's last sample is judged.
    pub learning: Option<crate::rl::Learning>,
    /// Answered main turns of each open session, the one count both triggers read (kept
    /// once: with thousands of sessions open, a copy per learner is megabytes).
    pub answered: Mutex<HashMap<String, u32>>,
}

impl LearningSink {
    fn answered(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.answered.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TurnSink for LearningSink {
    fn turn_finished(&self, turn: TurnRecord) {
        if turn.turn_type == TurnType::Main
            && (200..300).contains(&turn.status)
            && (self.evolution.is_some() || self.memory.is_some())
        {
            let answered = {
                let mut counts = self.answered();
                // The id is copied once per session, not once per turn.
                match counts.get_mut(&turn.session_id) {
                    Some(n) => {
                        *n = n.saturating_add(1);
                        *n
                    }
                    None => {
                        counts.insert(turn.session_id.clone(), 1);
                        1
                    }
                }
            };
            if let Some(evolution) = &self.evolution {
                evolution.main_turn(&turn.session_id, answered);
            }
            if let Some(memory) = &self.memory {
                memory.main_turn(&turn.session_id, answered);
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
        let answered = match event {
            SessionEvent::Ended { session_id, .. } => {
                self.answered().remove(session_id).unwrap_or(0)
            }
            SessionEvent::Started { .. } => 0,
        };
        // At shutdown there is no time for a model call; those turns wait for a later
        // trigger (a manual one, or the session resumed).
        if let SessionEvent::Ended {
            session_id, reason, ..
        } = event
            && *reason != EndReason::Shutdown
        {
            if let Some(evolution) = &self.evolution {
                evolution.session_ended(session_id, answered);
            }
            if let Some(memory) = &self.memory {
                memory.session_ended(session_id);
            }
        }
        if let SessionEvent::Ended { session_id, .. } = event
            && let Some(learning) = &self.learning
        {
            learning.session_ended(session_id);
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use bytes::Bytes;
    use metaclaw_proxy::seams::{Protocol, ReplyCapture};

    use super::*;

    fn turn(status: u16, error: Option<&str>) -> TurnRecord {
        TurnRecord {
            session_id: "s".into(),
            turn_type: TurnType::Main,
            scope: "default".into(),
            client_protocol: Protocol::Openai,
            upstream_protocol: Protocol::Openai,
            upstream: "primary".into(),
            model: "m".into(),
            request: Bytes::new(),
            reply: ReplyCapture::None,
            status,
            error: error.map(str::to_owned),
            overhead_ms: 1.25,
            ttft_ms: None,
            total_ms: 10.0,
            started_at: UNIX_EPOCH + Duration::from_millis(1_700),
            skill_generation: 0,
            injected_skills: Vec::new(),
            figures: Default::default(),
        }
    }

    #[test]
    fn every_turn_is_announced_with_its_overhead() {
        let events = Events::new();
        let mut rx = events.subscribe();
        announce(&events, &turn(200, None));
        assert_eq!(
            rx.try_recv().ok(),
            Some(EngineEvent::Turn {
                at_ms: 1_700,
                model: "m".into(),
                status: 200,
                overhead_ms: 1.25,
            })
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_refused_key_is_announced_before_the_turn() {
        let events = Events::new();
        let mut rx = events.subscribe();
        announce(
            &events,
            &turn(401, Some("upstream `primary` answered 401: bad key")),
        );
        assert_eq!(
            rx.try_recv().ok(),
            Some(EngineEvent::UpstreamAuthFailed {
                upstream: "primary".into(),
                status: 401,
            })
        );
        assert!(matches!(
            rx.try_recv(),
            Ok(EngineEvent::Turn { status: 401, .. })
        ));
        announce(&events, &turn(429, Some("rate limited")));
        assert!(matches!(
            rx.try_recv(),
            Ok(EngineEvent::Turn { status: 429, .. })
        ));
        assert!(rx.try_recv().is_err());
    }
}
