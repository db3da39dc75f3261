use std::sync::Mutex;

use jiff::tz::TimeZone;

use super::*;
use crate::clock::FakeClock;

/// The answer a [`FakeProbe`] gives; the test sets it.
type Answer = Arc<Mutex<Result<Duration, String>>>;

/// A probe whose answer the test sets.
struct FakeProbe(Answer);

impl IdleProbe for FakeProbe {
    fn idle_for(&self) -> Result<Duration, String> {
        self.0.lock().unwrap().clone()
    }
    fn name(&self) -> &'static str {
        "fake"
    }
}

fn t0() -> Timestamp {
    "2026-03-01T12:00:00Z".parse().unwrap()
}

fn fake(idle: Duration) -> (Box<dyn IdleProbe>, Answer) {
    let cell = Arc::new(Mutex::new(Ok(idle)));
    (Box::new(FakeProbe(Arc::clone(&cell))), cell)
}

fn clock() -> (FakeClock, Arc<dyn Clock>) {
    let c = FakeClock::new(t0(), TimeZone::UTC);
    (c.clone(), Arc::new(c))
}

const MIN: Duration = Duration::from_secs(60);

#[test]
fn opens_at_the_threshold_and_closes_below_it() {
    let (fake_clock, clock) = clock();
    let (probe, cell) = fake(Duration::ZERO);
    let s = IdleSource::new(probe, 30 * MIN, clock);
    assert_eq!(s.reason(), Reason::Idle);
    assert_eq!(s.read(t0()), Reading::Closed);
    fake_clock.advance(30 * MIN - Duration::from_millis(1));
    *cell.lock().unwrap() = Ok(30 * MIN - Duration::from_millis(1));
    assert_eq!(s.read(t0()), Reading::Closed);
    fake_clock.advance(Duration::from_millis(1));
    *cell.lock().unwrap() = Ok(30 * MIN);
    assert_eq!(s.read(t0()), Reading::Open { until: None });
    *cell.lock().unwrap() = Ok(5 * 60 * MIN);
    assert_eq!(s.read(t0()), Reading::Open { until: None });
    // The user comes back: an open window asks on every read.
    *cell.lock().unwrap() = Ok(Duration::from_millis(200));
    assert_eq!(s.read(t0()), Reading::Closed);
    assert_eq!(s.next(t0()), None);
}

/// A probe that counts how often it is asked.
struct CountingProbe(Answer, Arc<std::sync::atomic::AtomicUsize>);

impl IdleProbe for CountingProbe {
    fn idle_for(&self) -> Result<Duration, String> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.lock().unwrap().clone()
    }
    fn name(&self) -> &'static str {
        "counting"
    }
}

#[test]
fn the_desktop_is_not_asked_while_the_window_cannot_open_yet() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (fake_clock, clock) = clock();
    let cell: Answer = Arc::new(Mutex::new(Ok(10 * MIN)));
    let asked = Arc::new(AtomicUsize::new(0));
    let probe = CountingProbe(Arc::clone(&cell), Arc::clone(&asked));
    let s = IdleSource::new(Box::new(probe), 30 * MIN, clock);
    assert_eq!(s.read(t0()), Reading::Closed);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // Twenty minutes of two-second ticks: idle cannot reach 30 minutes before then.
    for _ in 0..599 {
        fake_clock.advance(Duration::from_secs(2));
        assert_eq!(s.read(t0()), Reading::Closed);
    }
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // The user typed meanwhile: asked again when the window could first open, and paced anew.
    fake_clock.advance(Duration::from_secs(3));
    *cell.lock().unwrap() = Ok(5 * MIN);
    assert_eq!(s.read(t0()), Reading::Closed);
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    fake_clock.advance(25 * MIN);
    *cell.lock().unwrap() = Ok(30 * MIN);
    assert_eq!(s.read(t0()), Reading::Open { until: None });
    assert_eq!(asked.load(Ordering::SeqCst), 3);
    // While open, every read asks (the user's return closes the window within a tick).
    assert_eq!(s.read(t0()), Reading::Open { until: None });
    assert_eq!(asked.load(Ordering::SeqCst), 4);
    // An error is not paced either.
    *cell.lock().unwrap() = Err("gone".to_owned());
    assert!(matches!(s.read(t0()), Reading::Unavailable { .. }));
    assert!(matches!(s.read(t0()), Reading::Unavailable { .. }));
    assert_eq!(asked.load(Ordering::SeqCst), 6);
}

/// A probe that is told when the threshold passes: cheap to read, never paced.
struct Told(CountingProbe);

impl IdleProbe for Told {
    fn idle_for(&self) -> Result<Duration, String> {
        self.0.idle_for()
    }
    fn name(&self) -> &'static str {
        "told"
    }
    fn paced(&self) -> bool {
        false
    }
}

#[test]
fn a_source_that_is_told_is_read_on_every_tick() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (fake_clock, clock) = clock();
    let cell: Answer = Arc::new(Mutex::new(Ok(Duration::ZERO)));
    let asked = Arc::new(AtomicUsize::new(0));
    let probe = Told(CountingProbe(Arc::clone(&cell), Arc::clone(&asked)));
    let s = IdleSource::new(Box::new(probe), 30 * MIN, clock);
    for _ in 0..3 {
        fake_clock.advance(Duration::from_secs(2));
        assert_eq!(s.read(t0()), Reading::Closed);
    }
    assert_eq!(asked.load(Ordering::SeqCst), 3);
    // Told the threshold passed: open at the next read.
    *cell.lock().unwrap() = Ok(30 * MIN);
    assert_eq!(s.read(t0()), Reading::Open { until: None });
}

#[test]
fn probe_error_is_unavailable_and_recovers() {
    let (_, clock) = clock();
    let (probe, cell) = fake(31 * MIN);
    let s = IdleSource::new(probe, 30 * MIN, clock);
    *cell.lock().unwrap() = Err("X server :0 went away".to_owned());
    assert_eq!(
        s.read(t0()),
        Reading::Unavailable {
            detail: "fake: X server :0 went away".to_owned()
        }
    );
    // Repeated errors keep reading Unavailable (logged once).
    assert!(matches!(s.read(t0()), Reading::Unavailable { .. }));
    *cell.lock().unwrap() = Ok(31 * MIN);
    assert_eq!(s.read(t0()), Reading::Open { until: None });
}

#[test]
fn last_activity_measures_from_the_latest_touch() {
    let last = LastActivity::new(t0());
    assert_eq!(last.idle_for(t0()), Duration::ZERO);
    let later = t0() + jiff::SignedDuration::from_mins(10);
    assert_eq!(last.idle_for(later), 10 * MIN);
    last.touch(t0() + jiff::SignedDuration::from_mins(4));
    assert_eq!(last.idle_for(later), 6 * MIN);
    // An older touch arriving late does not move it back.
    last.touch(t0() + jiff::SignedDuration::from_mins(1));
    assert_eq!(last.idle_for(later), 6 * MIN);
    // A clone shares the instant (the proxy and the probe hold clones).
    let shared = last.clone();
    shared.touch(later);
    assert_eq!(last.idle_for(later), Duration::ZERO);
    assert_eq!(last.last(), later);
    // A clock that stepped back reads as "just active", not a huge or negative idle.
    assert_eq!(last.idle_for(t0()), Duration::ZERO);
}

#[test]
fn request_fallback_crosses_the_threshold_with_the_clock() {
    let (fake_clock, clock) = clock();
    let last = LastActivity::new(t0());
    let s = IdleSource::new(
        probe_for(None, last.clone(), Arc::clone(&clock)),
        30 * MIN,
        clock,
    );
    assert_eq!(s.probe_name(), "last-request");
    fake_clock.advance(29 * MIN);
    assert_eq!(s.read(fake_clock.now()), Reading::Closed);
    fake_clock.advance(MIN);
    assert_eq!(s.read(fake_clock.now()), Reading::Open { until: None });
    assert_eq!(s.idle_since().unwrap(), t0());
    // Any proxy request counts as activity without a display.
    last.touch(fake_clock.now());
    assert_eq!(s.read(fake_clock.now()), Reading::Closed);
    fake_clock.advance(30 * MIN);
    assert_eq!(s.read(fake_clock.now()), Reading::Open { until: None });
}

#[test]
fn with_a_display_agent_traffic_does_not_close_the_window() {
    // The decision in the module docs: keyboard/mouse idle alone decides where a display
    // exists; the agent's own requests are not the user.
    let (fake_clock, clock) = clock();
    let last = LastActivity::new(t0());
    let (display, _cell) = fake(45 * MIN);
    let s = IdleSource::new(
        probe_for(Some(display), last.clone(), Arc::clone(&clock)),
        30 * MIN,
        clock,
    );
    assert_eq!(s.probe_name(), "fake");
    fake_clock.advance(MIN);
    last.touch(fake_clock.now());
    assert_eq!(s.read(fake_clock.now()), Reading::Open { until: None });
    assert_eq!(
        s.idle_since().unwrap(),
        fake_clock.now() - jiff::SignedDuration::from_mins(45)
    );
}

#[test]
fn system_probe_falls_back_without_a_usable_display() {
    // Whatever this machine has, system_probe must return a working probe and never crash.
    let (_, clock) = clock();
    let d = system_probe(LastActivity::new(t0()), clock, 30 * MIN);
    assert!(ORDER.contains(&d.probe.name()), "{}", d.probe.name());
    // Every source better than the chosen one says why it was passed over.
    let rank = ORDER.iter().position(|n| *n == d.probe.name()).unwrap();
    assert!(d.passed_over.len() <= rank, "{:?}", d.passed_over);
}
