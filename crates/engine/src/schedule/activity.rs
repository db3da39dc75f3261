//! Agent requests as activity, for the idle fallback where no display exists: the proxy
//! already counts every agent request (`Stats`, for status); a watcher turns a change of
//! that count into a touch of `LastActivity`. Nothing is added to the request path.

use std::sync::Arc;
use std::time::Duration;

use metaclaw_proxy::SharedState;
use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::idle::LastActivity;

use crate::supervise::Supervisor;

/// Bounds of the poll: a request is seen within an eighth of the idle threshold (so an idle
/// window opens at most that late), at most 10 s late with a threshold of minutes (the
/// storage retention asks for a quiet minute), and a tray app at rest is not woken every
/// second for it.
const FASTEST_POLL: Duration = Duration::from_millis(250);
const SLOWEST_POLL: Duration = Duration::from_secs(10);

/// Touches `last` whenever the proxy has served a new agent request, until the engine stops.
pub fn follow_requests(
    proxy: SharedState,
    last: LastActivity,
    idle_threshold: Duration,
    tasks: &Supervisor,
) {
    follow(
        move || proxy.stats.snapshot().requests,
        last,
        Arc::new(SystemClock),
        (idle_threshold / 8).clamp(FASTEST_POLL, SLOWEST_POLL),
        tasks,
    );
}

fn follow(
    count: impl Fn() -> u64 + Send + Sync + 'static,
    last: LastActivity,
    clock: Arc<dyn Clock>,
    poll: Duration,
    tasks: &Supervisor,
) {
    let count = Arc::new(count);
    let shutdown = tasks.shutdown_token();
    tasks.spawn_restarting("request activity", move || {
        let (count, last, clock) = (Arc::clone(&count), last.clone(), Arc::clone(&clock));
        let shutdown = shutdown.clone();
        async move {
            let mut seen = count();
            let mut every = tokio::time::interval(poll);
            loop {
                tokio::select! {
                    _ = every.tick() => {}
                    () = shutdown.cancelled() => return,
                }
                let now = count();
                if now != seen {
                    seen = now;
                    last.touch(clock.now());
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use jiff::Timestamp;
    use metaclaw_schedule::clock::FakeClock;
    use tokio_util::sync::CancellationToken;

    use super::*;

    #[tokio::test]
    async fn a_new_request_touches_last_activity() {
        let poll = Duration::from_millis(10);
        let start: Timestamp = "2026-12-03T10:00:00Z".parse().unwrap();
        let clock = FakeClock::new(start, jiff::tz::TimeZone::UTC);
        let last = LastActivity::new(start);
        let requests = Arc::new(AtomicU64::new(5));
        let stop = CancellationToken::new();
        let tasks = Supervisor::new(stop.clone());
        let counter = requests.clone();
        follow(
            move || counter.load(Ordering::Relaxed),
            last.clone(),
            Arc::new(clock.clone()),
            poll,
            &tasks,
        );
        clock.advance(Duration::from_secs(600));
        tokio::time::sleep(poll * 5).await;
        // No new request: still the start.
        assert_eq!(last.last(), start);
        requests.fetch_add(1, Ordering::Relaxed);
        let touched = tokio::time::timeout(Duration::from_secs(5), async {
            while last.last() == start {
                tokio::time::sleep(poll).await;
            }
        })
        .await;
        assert!(touched.is_ok(), "the new request was not seen");
        assert_eq!(last.last(), clock.now());
        stop.cancel();
        assert!(tasks.join(Duration::from_secs(5)).await.is_empty());
    }
}
