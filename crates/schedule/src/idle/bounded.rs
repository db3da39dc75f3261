//! A probe's query on a helper thread with a deadline, one at a time per probe: a display
//! server or bus service that hangs must not stall the scheduler, and a hung query must not
//! pile up threads behind it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long one query may take. A local display server or session bus answers in well under
/// a millisecond; this only bounds a hung one.
pub const TIMEOUT: Duration = Duration::from_millis(500);

/// Runs `query` on a thread named `name` and waits at most [`TIMEOUT`] for its answer.
/// `busy` is the probe's own flag: while a previous query still runs (it hung), this one is
/// refused at once.
pub fn run<T, F>(name: &str, busy: &Arc<AtomicBool>, query: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, String> + Send + 'static,
{
    if busy.swap(true, Ordering::AcqRel) {
        return Err(format!(
            "a {name} query is still running (a previous one hung?)"
        ));
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let flag = Arc::clone(busy);
    let spawned = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let r = query();
            flag.store(false, Ordering::Release);
            // The caller may have given up waiting; nothing to do then.
            let _ = tx.send(r);
        });
    if let Err(e) = spawned {
        busy.store(false, Ordering::Release);
        return Err(format!("cannot start the {name} query: {e}"));
    }
    match rx.recv_timeout(TIMEOUT) {
        Ok(r) => r,
        Err(_) => Err(format!(
            "no answer to the {name} query within {} ms",
            TIMEOUT.as_millis()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_refuses_while_hung_and_recovers() {
        let busy = Arc::new(AtomicBool::new(false));
        assert_eq!(run("t", &busy, || Ok(7)), Ok(7));
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let hung = run("t", &busy, move || {
            let _ = wait.recv();
            Ok(1)
        });
        assert!(hung.unwrap_err().contains("within 500 ms"));
        assert!(
            run("t", &busy, || Ok(2))
                .unwrap_err()
                .contains("still running")
        );
        release.send(()).unwrap();
        // The hung query ends and clears the flag.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while busy.load(Ordering::Acquire) {
            assert!(std::time::Instant::now() < deadline, "the flag stayed set");
            std::thread::yield_now();
        }
        assert_eq!(run("t", &busy, || Ok(3)), Ok(3));
    }
}
