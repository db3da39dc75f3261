//! Fetches the calendars on an interval and keeps the source's cache current.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{CalendarClient, CalendarError, CalendarSource, HORIZON};
use crate::clock::Clock;

pub struct CalendarPoller {
    client: CalendarClient,
    source: CalendarSource,
    clock: Arc<dyn Clock>,
    interval: Duration,
}

impl CalendarPoller {
    /// Polls `client` every `interval` (at least 10 ms) into `source`; the first poll is
    /// immediate.
    pub fn new(
        client: CalendarClient,
        source: CalendarSource,
        clock: Arc<dyn Clock>,
        interval: Duration,
    ) -> Self {
        Self {
            client,
            source,
            clock,
            interval: interval.max(Duration::from_millis(10)),
        }
    }

    /// One fetch of now..now+24h into the cache. A failure leaves the source
    /// `Unavailable` with the reason; the next poll tries again.
    pub async fn poll_once(&self) -> Result<(), CalendarError> {
        let now = self.clock.now();
        let horizon = jiff::SignedDuration::try_from(HORIZON).unwrap_or_default();
        let until = now.saturating_add(horizon).unwrap_or(now);
        match self.client.busy_between(now, until).await {
            Ok(blocks) => {
                let was_failing = self.source.state().error.is_some();
                tracing::debug!(blocks = blocks.len(), "calendar fetched");
                if was_failing {
                    tracing::info!("the calendar is readable again");
                }
                self.source.set_blocks(blocks, now);
                Ok(())
            }
            Err(e) => {
                let previous = self.source.state().error;
                if previous.as_deref() != Some(e.to_string().as_str()) {
                    tracing::warn!(error = %e, "cannot read the calendar; meetings will not open a window until it can");
                }
                self.source.set_error(&e);
                Err(e)
            }
        }
    }

    /// Polls until `shutdown`. Never returns an error: a failing calendar only makes the
    /// source unavailable.
    pub async fn run(self, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = self.poll_once() => {}
            }
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(self.interval) => {}
            }
        }
    }
}
