//! How often a learning job may call its model after failures.
//!
//! A failed or unusable answer backs off exponentially, per session and for the whole job
//! (the provider is shared): no call before the back-off has passed, whatever the triggers.
//! A session's stretch of turns that failed [`MAX_ATTEMPTS`] times is given up on (the caller
//! falls back and moves its mark), and while the job as a whole has failed that often and
//! is backing off, callers that have a fallback use it instead of the model. Any success
//! resets both.
//!
//! Kept in bounded memory: a restart forgets it, which costs at most one call per stretch
//! before the back-off is in force again, and nothing that was learned.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

/// Failures of one stretch (and of the job in a row) before falling back.
pub const MAX_ATTEMPTS: u32 = 3;
/// The first back-off; doubles with each failure in a row.
const BASE: Duration = Duration::from_secs(30);
const CAP: Duration = Duration::from_secs(3600);
/// Sessions whose failures are remembered; beyond this the one free soonest is forgotten.
const MAX_SESSIONS: usize = 1024;
/// Triggers held while backing off; beyond this the oldest is dropped (its turns wait for
/// the session's next trigger).
const MAX_DEFERRED: usize = 1024;
/// Overrides [`BASE`] in milliseconds (tests, and users who want a different pace).
pub const BACKOFF_ENV: &str = "METACLAW_LEARNING_BACKOFF_MS";

/// What a trigger may do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Call the model, with no turn after `through` (a failed stretch is not re-sent grown).
    Call { through: Option<u64> },
    /// Backing off: the turns wait.
    Wait,
    /// The model keeps failing and is backing off: use the fallback, if there is one.
    Fallback,
}

/// A learning job's health, as status shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobHealth {
    /// `skill_evolution`, `memory_extraction`, `rl_trainer`.
    pub job: String,
    /// Failed attempts since start (`rl_trainer`: 1 while its last error stands; the
    /// trainer keeps its own retries).
    pub failures: u64,
    /// Failures in a row, over every session; 0 once a call succeeds.
    pub failing_in_a_row: u32,
    pub last_error: Option<String>,
    pub last_error_at_ms: Option<i64>,
    /// No model call before this.
    pub backing_off_until_ms: Option<i64>,
    /// Stretches of turns the model was given up on for.
    pub given_up: u64,
    pub last_given_up: Option<String>,
    pub last_success_at_ms: Option<i64>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Strike {
    failures: u32,
    until: Option<Instant>,
}

impl Strike {
    fn waiting(&self, now: Instant) -> bool {
        self.until.is_some_and(|u| now < u)
    }

    fn fail(&mut self, now: Instant, base: Duration) {
        self.failures = self.failures.saturating_add(1);
        let doubling = 2u32.saturating_pow(self.failures.saturating_sub(1).min(20));
        self.until = Some(now + base.saturating_mul(doubling).min(CAP));
    }
}

#[derive(Debug, Default)]
struct Session {
    strike: Strike,
    /// The last turn of the stretch that failed; later turns wait for the next stretch.
    through: Option<u64>,
}

#[derive(Debug, Default)]
struct State {
    job: Strike,
    sessions: HashMap<String, Session>,
    health: JobHealth,
}

impl State {
    /// A failure of the job as a whole: it backs off, and status learns why.
    fn job_failed(&mut self, error: &str, now: Instant, base: Duration) {
        self.job.fail(now, base);
        self.health.failures += 1;
        self.health.last_error = Some(error.to_owned());
        self.health.last_error_at_ms = Some(now_ms());
    }
}

#[derive(Debug)]
pub struct Pacing {
    base: Duration,
    state: Mutex<State>,
}

impl Pacing {
    /// `job` names it in status.
    pub fn new(job: &str) -> Pacing {
        let base = std::env::var(BACKOFF_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(BASE, Duration::from_millis);
        Self::with_base(job, base)
    }

    pub fn with_base(job: &str, base: Duration) -> Pacing {
        let state = State {
            health: JobHealth {
                job: job.to_owned(),
                ..JobHealth::default()
            },
            ..State::default()
        };
        Pacing {
            base,
            state: Mutex::new(state),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What `session`'s trigger may do. `explicit` (asked for by a person) skips the wait,
    /// not the limit on the stretch.
    pub fn decide(&self, session: &str, explicit: bool) -> Decision {
        self.decide_at(session, explicit, Instant::now())
    }

    fn decide_at(&self, session: &str, explicit: bool, now: Instant) -> Decision {
        let state = self.lock();
        let own = state.sessions.get(session);
        let through = own.and_then(|s| s.through);
        if explicit {
            return Decision::Call { through };
        }
        if state.job.waiting(now) {
            return if state.job.failures >= MAX_ATTEMPTS {
                Decision::Fallback
            } else {
                Decision::Wait
            };
        }
        if own.is_some_and(|s| s.strike.waiting(now)) {
            return Decision::Wait;
        }
        Decision::Call { through }
    }

    /// When `session`'s automatic trigger may next call (or fall back); now if it may.
    pub fn ready_at(&self, session: &str) -> Instant {
        let state = self.lock();
        let own = state.sessions.get(session).and_then(|s| s.strike.until);
        let at = [state.job.until, own].into_iter().flatten().max();
        at.unwrap_or_else(Instant::now)
    }

    /// A call for `session`'s stretch ending at `through` failed with `error`. True when
    /// the stretch is given up on: the caller falls back and moves its mark past it.
    pub fn failed(&self, session: &str, through: Option<u64>, error: &str) -> bool {
        self.failed_at(session, through, error, Instant::now())
    }

    fn failed_at(&self, session: &str, through: Option<u64>, error: &str, now: Instant) -> bool {
        let mut state = self.lock();
        let base = self.base;
        state.job_failed(error, now, base);
        if !state.sessions.contains_key(session) && state.sessions.len() >= MAX_SESSIONS {
            forget_one(&mut state.sessions);
        }
        let own = state.sessions.entry(session.to_owned()).or_default();
        own.strike.fail(now, base);
        own.through = own.through.or(through);
        if own.strike.failures < MAX_ATTEMPTS {
            return false;
        }
        state.sessions.remove(session);
        state.health.given_up += 1;
        true
    }

    /// The model answered, but not usably even after a repair: the job backs off as after
    /// any failure, and `session`'s stretch is given up on at once (the caller falls back
    /// and moves its mark), since asking again for the same turns would fail the same.
    pub fn unusable(&self, session: &str, error: &str) {
        self.unusable_at(session, error, Instant::now());
    }

    fn unusable_at(&self, session: &str, error: &str, now: Instant) {
        let mut state = self.lock();
        state.job_failed(error, now, self.base);
        state.sessions.remove(session);
        state.health.given_up += 1;
    }

    /// Records why a stretch was given up on (or skipped), for status.
    pub fn gave_up(&self, reason: &str) {
        self.lock().health.last_given_up = Some(reason.to_owned());
    }

    /// A call succeeded: the session and the job start afresh.
    pub fn succeeded(&self, session: &str) {
        let mut state = self.lock();
        state.sessions.remove(session);
        state.job = Strike::default();
        state.health.last_success_at_ms = Some(now_ms());
    }

    pub fn health(&self) -> JobHealth {
        let state = self.lock();
        let now = Instant::now();
        let mut health = state.health.clone();
        health.failing_in_a_row = state.job.failures;
        health.backing_off_until_ms = state.job.until.filter(|u| *u > now).map(|u| {
            let left = i64::try_from(u.duration_since(now).as_millis()).unwrap_or(i64::MAX);
            now_ms().saturating_add(left)
        });
        health
    }
}

/// Triggers that came while the model was backing off, run one at a time once it allows,
/// so a passing failure never strands a session's turns (its session-end trigger would not
/// come again). One per session; bounded.
#[derive(Debug)]
pub struct Deferred<T> {
    queue: Mutex<VecDeque<(String, T)>>,
    added: Notify,
}

impl<T> Default for Deferred<T> {
    fn default() -> Self {
        Deferred {
            queue: Mutex::new(VecDeque::new()),
            added: Notify::new(),
        }
    }
}

impl<T> Deferred<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(String, T)>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds `item` for `session` unless one is already held for it.
    pub fn push(&self, session: &str, item: T) {
        {
            let mut queue = self.lock();
            if queue.iter().any(|(s, _)| s == session) {
                return;
            }
            if queue.len() >= MAX_DEFERRED {
                queue.pop_front();
                tracing::debug!(
                    "too many learning triggers held; the oldest waits for its next trigger"
                );
            }
            queue.push_back((session.to_owned(), item));
        }
        self.added.notify_one();
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// The oldest held trigger, once `pacing` allows it. Cancel-safe: nothing is taken
    /// before the wait is over.
    pub async fn next(&self, pacing: &Pacing) -> (String, T) {
        loop {
            let added = self.added.notified();
            let front = self.lock().front().map(|(s, _)| s.clone());
            match front {
                None => added.await,
                Some(session) => {
                    tokio::time::sleep_until(pacing.ready_at(&session).into()).await;
                    if let Some(item) = self.lock().pop_front() {
                        return item;
                    }
                }
            }
        }
    }
}

/// Drops the session whose back-off ends first (it would be allowed a call soonest anyway).
fn forget_one(sessions: &mut HashMap<String, Session>) {
    let soonest = sessions
        .iter()
        .min_by_key(|(_, s)| s.strike.until)
        .map(|(k, _)| k.clone());
    if let Some(key) = soonest {
        sessions.remove(&key);
    }
}

fn now_ms() -> i64 {
    crate::clock::now_ms()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn failures_back_off_exponentially_for_the_session_and_the_job() {
        let p = Pacing::with_base("t", SECOND);
        let t0 = Instant::now();
        assert_eq!(
            p.decide_at("a", false, t0),
            Decision::Call { through: None }
        );
        assert!(!p.failed_at("a", Some(9), "garbage", t0));
        // The job waits, for every session.
        assert_eq!(p.decide_at("b", false, t0), Decision::Wait);
        let t1 = t0 + SECOND;
        assert_eq!(
            p.decide_at("a", false, t1),
            Decision::Call { through: Some(9) },
            "the failed stretch again, not grown"
        );
        assert!(!p.failed_at("a", Some(15), "garbage", t1));
        // Two in a row: two seconds.
        assert_eq!(p.decide_at("a", false, t1 + SECOND), Decision::Wait);
        let t2 = t1 + 2 * SECOND;
        assert_eq!(
            p.decide_at("a", false, t2),
            Decision::Call { through: Some(9) }
        );
        assert!(p.failed_at("a", Some(9), "garbage", t2), "given up");
        // Given up: the session's next stretch starts fresh, but the job keeps backing off
        // and, having failed that often, falls back.
        assert_eq!(p.decide_at("a", false, t2), Decision::Fallback);
        assert_eq!(p.decide_at("a", true, t2), Decision::Call { through: None });
        let h = p.health();
        assert_eq!((h.failures, h.given_up, h.failing_in_a_row), (3, 1, 3));
        assert_eq!(h.last_error.as_deref(), Some("garbage"));
        assert_eq!(
            p.decide_at("a", false, t2 + 4 * SECOND),
            Decision::Call { through: None }
        );
        p.succeeded("a");
        assert_eq!(p.health().failing_in_a_row, 0);
        assert_eq!(
            p.decide_at("b", false, t2),
            Decision::Call { through: None }
        );
    }

    #[test]
    fn an_unusable_answer_gives_the_stretch_up_at_once_and_backs_the_job_off() {
        let p = Pacing::with_base("t", SECOND);
        let t0 = Instant::now();
        assert!(!p.failed_at("a", Some(4), "timeout", t0));
        p.unusable_at("a", "no JSON, repaired once", t0 + SECOND);
        // The stretch is gone: the next call starts after the caller's moved mark.
        let t1 = t0 + 4 * SECOND;
        assert_eq!(
            p.decide_at("a", false, t1),
            Decision::Call { through: None }
        );
        // Two failures in a row: the job waits two seconds, for every session.
        assert_eq!(p.decide_at("b", false, t0 + 2 * SECOND), Decision::Wait);
        let h = p.health();
        assert_eq!((h.failures, h.given_up, h.failing_in_a_row), (2, 1, 2));
        assert_eq!(h.last_error.as_deref(), Some("no JSON, repaired once"));
    }

    #[tokio::test]
    async fn deferred_triggers_wait_for_the_back_off_and_are_held_once_per_session() {
        let p = Pacing::with_base("t", Duration::from_millis(50));
        let d: Deferred<u8> = Deferred::default();
        let began = Instant::now();
        p.failed("a", Some(1), "x");
        d.push("a", 1);
        d.push("a", 2);
        d.push("b", 3);
        assert_eq!(d.len(), 2);
        assert_eq!(d.next(&p).await, ("a".to_owned(), 1));
        assert!(
            began.elapsed() >= Duration::from_millis(50),
            "waited for the back-off"
        );
        assert_eq!(d.next(&p).await, ("b".to_owned(), 3));
        assert!(d.is_empty());
    }

    #[test]
    fn the_back_off_is_capped_and_sessions_are_bounded() {
        let p = Pacing::with_base("t", CAP);
        let t0 = Instant::now();
        for i in 0..(MAX_SESSIONS + 10) {
            p.failed_at(&format!("s{i}"), Some(1), "x", t0);
        }
        let state = p.lock();
        assert!(state.sessions.len() <= MAX_SESSIONS);
        assert!(state.job.until.unwrap() <= t0 + CAP);
    }
}
