//! Open sessions in memory, their lifecycle events, and the idle sweeper.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

// tokio's clock, so tests can advance time instead of waiting for it.
use tokio::time::Instant;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::seams::{EndReason, SessionEvent, TurnSink, TurnType};

/// Sessions open at once. Beyond this, a new session ends the one silent the longest, as
/// its idle timeout would have: a client that opens a conversation per request cannot grow
/// this map (and the per-session counters that live until a session ends) without bound.
pub const MAX_OPEN: usize = 10_000;

/// How often the sweeper looks whether the proxy went quiet.
const QUIET_CHECK_EVERY: Duration = Duration::from_secs(5);

/// Without a request for this long the proxy is quiet: caches that only save time while
/// requests keep coming (remembered blocks in memory, idle database connections) are
/// dropped and their memory given back. An agent's own tool loop sends its requests
/// seconds apart; a person reading and typing is what makes the pause longer.
pub const QUIET_AFTER: Duration = Duration::from_secs(30);

/// Something to run once the proxy has gone quiet.
pub type QuietHook = Box<dyn Fn() + Send + Sync>;

struct Open {
    scope: String,
    last_seen: Instant,
    main_turns: u32,
}

/// The sessions the proxy is serving. Events go to the sink (so they are recorded in order
/// with the turns) and to a broadcast channel for other subscribers (memory, skills).
pub struct Sessions {
    open: Mutex<HashMap<String, Open>>,
    max_open: usize,
    /// Requests noted so far, so the sweeper can tell whether the proxy served any since it last looked.
    touches: AtomicU64,
    events: broadcast::Sender<SessionEvent>,
    sink: Arc<dyn TurnSink>,
    idle_timeout: Duration,
    quiet_hooks: Mutex<Vec<QuietHook>>,
}

impl Sessions {
    pub fn new(sink: Arc<dyn TurnSink>, idle_timeout: Duration) -> Self {
        Self::with_max_open(sink, idle_timeout, MAX_OPEN)
    }

    pub fn with_max_open(sink: Arc<dyn TurnSink>, idle_timeout: Duration, max_open: usize) -> Self {
        let (events, _) = broadcast::channel(1024);
        Sessions {
            open: Mutex::new(HashMap::new()),
            max_open: max_open.max(1),
            touches: AtomicU64::new(0),
            events,
            sink,
            idle_timeout,
            quiet_hooks: Mutex::new(Vec::new()),
        }
    }

    /// Runs `hook` each time the proxy goes quiet ([`QUIET_AFTER`] without a request after
    /// serving some). Hooks run on the sweeper: they must be quick (drop a cache, close a
    /// connection).
    pub fn on_quiet(&self, hook: QuietHook) {
        self.quiet_hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(hook);
    }

    /// Runs the quiet hooks now; returns how many ran.
    pub fn quieten(&self) -> usize {
        let hooks = self
            .quiet_hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for hook in hooks.iter() {
            hook();
        }
        hooks.len()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.events.subscribe()
    }

    pub fn open_count(&self) -> usize {
        self.lock().len()
    }

    /// Notes a request; starts the session if it is new.
    pub fn touch(&self, id: &str, scope: &str, turn_type: TurnType) {
        self.touches.fetch_add(1, Ordering::Relaxed);
        let (started, displaced) = {
            let mut open = self.lock();
            let now = Instant::now();
            match open.get_mut(id) {
                Some(s) => {
                    s.last_seen = now;
                    if turn_type == TurnType::Main {
                        s.main_turns += 1;
                    }
                    (false, None)
                }
                None => {
                    let displaced = if open.len() >= self.max_open {
                        least_recently_seen(&open).and_then(|old| open.remove_entry(&old))
                    } else {
                        None
                    };
                    open.insert(
                        id.to_string(),
                        Open {
                            scope: scope.to_string(),
                            last_seen: now,
                            main_turns: u32::from(turn_type == TurnType::Main),
                        },
                    );
                    (true, displaced)
                }
            }
        };
        if let Some((old_id, old)) = displaced {
            self.emit_ended(old_id, old, EndReason::Idle);
        }
        if started {
            self.emit(SessionEvent::Started {
                session_id: id.to_string(),
                scope: scope.to_string(),
                at: SystemTime::now(),
            });
        }
    }

    /// Ends a session if it is open.
    pub fn end(&self, id: &str, reason: EndReason) {
        let ended = self.lock().remove(id);
        if let Some(s) = ended {
            self.emit_ended(id.to_string(), s, reason);
        }
    }

    /// Ends every session idle for longer than the timeout; returns how many.
    pub fn sweep(&self, now: Instant) -> usize {
        let expired: Vec<(String, Open)> = {
            let mut open = self.lock();
            let ids: Vec<String> = open
                .iter()
                .filter(|(_, s)| now.saturating_duration_since(s.last_seen) >= self.idle_timeout)
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| open.remove(&id).map(|s| (id, s)))
                .collect()
        };
        let n = expired.len();
        for (id, s) in expired {
            self.emit_ended(id, s, EndReason::Idle);
        }
        n
    }

    /// Ends every open session (clean shutdown).
    pub fn end_all(&self, reason: EndReason) {
        let all: Vec<(String, Open)> = self.lock().drain().collect();
        for (id, s) in all {
            self.emit_ended(id, s, reason);
        }
    }

    /// Runs the idle sweeper until cancelled. Once requests stop for [`QUIET_AFTER`], the
    /// quiet hooks drop their caches (the allocator gives the freed pages back by itself).
    pub async fn run_sweeper(self: Arc<Self>, cancel: CancellationToken) {
        // Check often enough that a session ends within a quarter of its timeout.
        let period =
            (self.idle_timeout / 4).clamp(Duration::from_millis(20), Duration::from_secs(30));
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut quiet_check = tokio::time::interval(QUIET_CHECK_EVERY);
        quiet_check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut seen = 0;
        let mut last_request = Instant::now();
        let mut quieted = true;
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tick.tick() => {
                    let ended = self.sweep(Instant::now());
                    if ended > 0 {
                        tracing::info!(ended, "idle sessions ended");
                    }
                    // Once quiet, the quiet check rests (no wake-up every few seconds at
                    // rest); a request is noticed here and wakes it.
                    let now = self.touches.load(Ordering::Relaxed);
                    if quieted && now != seen {
                        seen = now;
                        last_request = Instant::now();
                        quieted = false;
                    }
                }
                _ = quiet_check.tick(), if !quieted => {
                    let now = self.touches.load(Ordering::Relaxed);
                    if now != seen {
                        seen = now;
                        last_request = Instant::now();
                        quieted = false;
                    } else if !quieted && last_request.elapsed() >= QUIET_AFTER {
                        quieted = true;
                        let hooks = self.quieten();
                        tracing::debug!(hooks, "quiet: caches dropped");
                    }
                }
            }
        }
    }

    fn emit_ended(&self, session_id: String, s: Open, reason: EndReason) {
        self.emit(SessionEvent::Ended {
            session_id,
            scope: s.scope,
            reason,
            main_turns: s.main_turns,
            at: SystemTime::now(),
        });
    }

    fn emit(&self, event: SessionEvent) {
        self.sink.session_event(&event);
        // No subscribers is normal (nothing listens yet); not an error.
        let _ = self.events.send(event);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Open>> {
        // A panic while holding this lock cannot leave the map half-updated, so keep serving.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The open session silent the longest: a linear scan, run only when the map is full.
fn least_recently_seen(open: &HashMap<String, Open>) -> Option<String> {
    open.iter()
        .min_by_key(|(_, s)| s.last_seen)
        .map(|(id, _)| id.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seams::TurnRecord;

    #[derive(Default)]
    struct Events(Mutex<Vec<SessionEvent>>);
    impl TurnSink for Events {
        fn turn_finished(&self, _turn: TurnRecord) {}
        fn queue_depth(&self) -> usize {
            0
        }
        fn session_event(&self, event: &SessionEvent) {
            self.0.lock().unwrap().push(event.clone());
        }
    }

    #[test]
    fn start_once_then_end_explicitly() {
        let sink = Arc::new(Events::default());
        let s = Sessions::new(sink.clone(), Duration::from_secs(60));
        let mut rx = s.subscribe();
        s.touch("a", "default", TurnType::Main);
        s.touch("a", "default", TurnType::Main);
        s.touch("a", "default", TurnType::Side);
        assert_eq!(s.open_count(), 1);
        s.end("a", EndReason::Explicit);
        s.end("a", EndReason::Explicit);
        let ev = sink.0.lock().unwrap().clone();
        assert_eq!(ev.len(), 2, "one start, one end: {ev:?}");
        match &ev[1] {
            SessionEvent::Ended {
                main_turns, reason, ..
            } => {
                assert_eq!(*main_turns, 2);
                assert_eq!(*reason, EndReason::Explicit);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(rx.try_recv(), Ok(SessionEvent::Started { .. })));
        assert!(matches!(rx.try_recv(), Ok(SessionEvent::Ended { .. })));
    }

    #[test]
    fn sweep_ends_only_idle_sessions() {
        let sink = Arc::new(Events::default());
        let s = Sessions::new(sink.clone(), Duration::from_secs(60));
        s.touch("old", "d", TurnType::Main);
        let later = Instant::now() + Duration::from_secs(61);
        assert_eq!(s.sweep(Instant::now()), 0);
        assert_eq!(s.sweep(later), 1);
        assert_eq!(s.open_count(), 0);
        let ev = sink.0.lock().unwrap().clone();
        assert!(matches!(
            ev.last(),
            Some(SessionEvent::Ended {
                reason: EndReason::Idle,
                ..
            })
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_registry_ends_the_session_silent_the_longest() {
        let sink = Arc::new(Events::default());
        let s = Sessions::with_max_open(sink.clone(), Duration::from_secs(60), 3);
        for id in ["a", "b", "c"] {
            s.touch(id, "d", TurnType::Main);
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        // "a" spoke again, so "b" is now the one silent the longest.
        s.touch("a", "d", TurnType::Main);
        s.touch("new", "d", TurnType::Main);
        assert_eq!(s.open_count(), 3);
        let ev = sink.0.lock().unwrap().clone();
        let ended: Vec<_> = ev
            .iter()
            .filter_map(|e| match e {
                SessionEvent::Ended {
                    session_id, reason, ..
                } => Some((session_id.clone(), *reason)),
                SessionEvent::Started { .. } => None,
            })
            .collect();
        assert_eq!(ended, vec![("b".to_string(), EndReason::Idle)]);
        // Ended before the new one started, like an idle timeout between the two.
        assert!(matches!(
            ev.last(),
            Some(SessionEvent::Started { session_id, .. }) if session_id == "new"
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn quiet_hooks_run_once_after_requests_stop_and_again_after_the_next_burst() {
        let sink = Arc::new(Events::default());
        let s = Arc::new(Sessions::new(sink, Duration::from_secs(3600)));
        let (tx, mut ran) = tokio::sync::mpsc::unbounded_channel::<Instant>();
        s.on_quiet(Box::new(move || {
            let _ = tx.send(Instant::now());
        }));
        let cancel = CancellationToken::new();
        let task = tokio::spawn(s.clone().run_sweeper(cancel.clone()));
        // Nothing served yet: nothing to drop, however long it stays silent.
        tokio::time::advance(QUIET_AFTER * 3).await;
        assert!(ran.try_recv().is_err());

        let began = Instant::now();
        s.touch("a", "d", TurnType::Main);
        let first = ran.recv().await.unwrap();
        let waited = first - began;
        assert!(
            waited >= QUIET_AFTER && waited <= QUIET_AFTER + QUIET_CHECK_EVERY * 2,
            "{waited:?}"
        );
        tokio::time::advance(QUIET_AFTER * 3).await;
        assert!(ran.try_recv().is_err(), "once per quiet stretch");

        s.touch("a", "d", TurnType::Main);
        let second = ran.recv().await.unwrap();
        assert!(second > first);
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn sweeper_task_ends_idle_session_on_its_own() {
        let sink = Arc::new(Events::default());
        let s = Arc::new(Sessions::new(sink.clone(), Duration::from_secs(60)));
        let mut rx = s.subscribe();
        s.touch("x", "d", TurnType::Main);
        let _ = rx.recv().await;
        let cancel = CancellationToken::new();
        let task = tokio::spawn(s.clone().run_sweeper(cancel.clone()));
        // With the clock paused, tokio advances virtual time until the sweeper fires.
        let ended = rx.recv().await.unwrap();
        assert!(matches!(
            ended,
            SessionEvent::Ended {
                reason: EndReason::Idle,
                ..
            }
        ));
        cancel.cancel();
        task.await.unwrap();
    }
}
