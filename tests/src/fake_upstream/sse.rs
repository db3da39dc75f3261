//! Streaming response bodies: paced frames, injected stream faults, and a drop guard that
//! counts clients that went away before the stream completed.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;

use super::fault::Fault;
use super::state::Shared;

pub const SSE_CONTENT_TYPE: &str = "text/event-stream; charset=utf-8";

/// Pause before an injected disconnect so the frames before it reach the client.
const FLUSH_PAUSE: Duration = Duration::from_millis(20);

/// Frames to send and how to misbehave while sending them.
#[derive(Debug, Default)]
pub struct StreamPlan {
    pub frames: Vec<Bytes>,
    /// Pause before every frame but the first.
    pub delay: Option<Duration>,
    /// Send only this many frames, then abort the connection (no terminator).
    pub disconnect_after: Option<usize>,
    /// After the last frame, keep the connection open until the client leaves.
    pub hold_open: bool,
}

impl StreamPlan {
    pub fn new(frames: Vec<Bytes>) -> Self {
        Self {
            frames,
            ..Self::default()
        }
    }

    /// Applies the stream-shaping part of a fault. `malformed` is the bad frame to insert
    /// after the first `keep` frames; `keep` is also how many frames a disconnect lets through.
    pub fn with_fault(mut self, fault: Option<Fault>, keep: usize, malformed: Bytes) -> Self {
        let keep = keep.min(self.frames.len().saturating_sub(1));
        match fault {
            Some(Fault::ChunkDelay(d)) => self.delay = Some(d),
            Some(Fault::DisconnectMidStream) => self.disconnect_after = Some(keep),
            Some(Fault::EndEarly) => self.frames.truncate(keep),
            Some(Fault::MalformedSse) => self.frames.insert(keep, malformed),
            Some(Fault::HoldOpen) => self.hold_open = true,
            _ => {}
        }
        self
    }
}

/// Counts the stream as cancelled unless it was marked done before being dropped. Hyper drops
/// the body when the client's connection goes away, so this observes client cancellation.
struct CancelGuard {
    shared: Arc<Shared>,
    done: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if !self.done {
            self.shared.count_cancelled_stream();
        }
    }
}

struct BodyState {
    frames: VecDeque<Bytes>,
    delay: Option<Duration>,
    abort_at_end: bool,
    hold_open: bool,
    sent_any: bool,
    finished: bool,
    guard: CancelGuard,
}

/// A 200 response whose body follows `plan`.
pub fn streamed_response(
    shared: Arc<Shared>,
    content_type: &'static str,
    extra_headers: &[(&'static str, String)],
    plan: StreamPlan,
) -> Response {
    let mut frames: VecDeque<Bytes> = plan.frames.into();
    if let Some(n) = plan.disconnect_after {
        frames.truncate(n);
    }
    let state = BodyState {
        frames,
        delay: plan.delay,
        abort_at_end: plan.disconnect_after.is_some(),
        hold_open: plan.hold_open,
        sent_any: false,
        finished: false,
        guard: CancelGuard {
            shared,
            done: false,
        },
    };
    let stream = futures_util::stream::unfold(state, next_frame);
    let mut resp = Response::new(Body::from_stream(stream));
    *resp.status_mut() = StatusCode::OK;
    let headers = resp.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    for (name, value) in extra_headers {
        if let Ok(v) = HeaderValue::from_str(value) {
            headers.insert(*name, v);
        }
    }
    resp
}

async fn next_frame(mut st: BodyState) -> Option<(io::Result<Bytes>, BodyState)> {
    if st.finished {
        return None;
    }
    let Some(frame) = st.frames.pop_front() else {
        st.guard.done = true;
        if st.abort_at_end {
            // Let hyper flush what was sent (it flushes when the body is pending), then an error
            // from the body makes it drop the connection without the final chunk.
            tokio::time::sleep(FLUSH_PAUSE).await;
            st.finished = true;
            let err = io::Error::new(io::ErrorKind::ConnectionAborted, "injected disconnect");
            return Some((Err(err), st));
        }
        if st.hold_open {
            // The reply is whole; only the client leaving (or the fake stopping) ends it.
            st.guard.shared.shutdown.clone().cancelled().await;
        }
        return None;
    };
    if let (Some(delay), true) = (st.delay, st.sent_any) {
        let shutdown = st.guard.shared.shutdown.clone();
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = shutdown.cancelled() => {}
        }
    }
    st.sent_any = true;
    Some((Ok(frame), st))
}

/// An SSE frame with only a `data:` line.
pub fn data_frame(data: &str) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

/// An SSE frame with an `event:` line and a `data:` line.
pub fn event_frame(event: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {data}\n\n"))
}
