//! Builds the turn record while a reply is relayed, and hands it to the sink when it ends.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use tokio::time::Instant;

use crate::seams::{
    EndReason, Protocol, ReplyCapture, TurnFigures, TurnRecord, TurnSink, TurnType,
};
use crate::session::{RequestMeta, Sessions};

/// Everything known about a turn before the reply starts.
pub struct Draft {
    pub session_id: String,
    pub turn_type: TurnType,
    pub scope: String,
    pub client_protocol: Protocol,
    pub upstream_protocol: Protocol,
    pub upstream: String,
    pub model: String,
    pub request: Bytes,
    pub arrived: Instant,
    pub started_at: SystemTime,
    /// MetaClaw's own time so far (parsing, injection, building the upstream request).
    pub overhead: Duration,
    pub sink: Arc<dyn TurnSink>,
    /// Set when the client marked this turn as the session's last.
    pub end_session: Option<Arc<Sessions>>,
    pub skill_generation: u64,
    pub injected_skills: Vec<String>,
    /// What was injected, and the usage the relay read on the way.
    pub figures: TurnFigures,
}

impl Draft {
    pub fn new(
        meta: &RequestMeta,
        client: Protocol,
        model: String,
        sink: Arc<dyn TurnSink>,
        arrived: Instant,
    ) -> Self {
        Draft {
            session_id: meta.session_id.clone(),
            turn_type: meta.turn_type,
            scope: meta.scope.clone(),
            client_protocol: client,
            upstream_protocol: client,
            upstream: String::new(),
            model,
            request: Bytes::new(),
            arrived,
            started_at: SystemTime::now(),
            overhead: Duration::ZERO,
            sink,
            end_session: None,
            skill_generation: 0,
            injected_skills: Vec::new(),
            figures: TurnFigures::default(),
        }
    }

    pub fn overhead_ms(&self) -> f64 {
        self.overhead.as_secs_f64() * 1000.0
    }

    /// Hands the finished turn to the sink (which queues it and returns at once).
    pub fn finish(
        self,
        reply: ReplyCapture,
        status: u16,
        error: Option<String>,
        first_byte: Option<Instant>,
    ) {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let record_session = self.session_id.clone();
        let record = TurnRecord {
            overhead_ms: ms(self.overhead),
            ttft_ms: first_byte.map(|t| ms(t.saturating_duration_since(self.arrived))),
            total_ms: ms(self.arrived.elapsed()),
            session_id: self.session_id,
            turn_type: self.turn_type,
            scope: self.scope,
            client_protocol: self.client_protocol,
            upstream_protocol: self.upstream_protocol,
            upstream: self.upstream,
            model: self.model,
            skill_generation: self.skill_generation,
            injected_skills: self.injected_skills,
            request: self.request,
            reply,
            status,
            error,
            started_at: self.started_at,
            figures: self.figures,
        };
        self.sink.turn_finished(record);
        if let Some(sessions) = self.end_session {
            sessions.end(&record_session, EndReason::Explicit);
        }
    }
}
