use super::*;
use crate::seams::BoxFuture;

/// A store that keeps everything and logs which keys it was asked for.
#[derive(Default)]
struct Recorded {
    rows: Mutex<Vec<(String, String, Injection)>>,
    asked: Mutex<Vec<String>>,
    released: AtomicUsize,
}

impl StickyStore for Recorded {
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        keys: &'a [String],
    ) -> BoxFuture<'a, Vec<(String, Injection)>> {
        self.asked.lock().unwrap().extend(keys.iter().cloned());
        let rows: Vec<_> = self
            .rows
            .lock()
            .unwrap()
            .iter()
            .filter(|(s, k, _)| s == session_id && keys.contains(k))
            .map(|(_, k, i)| (k.clone(), i.clone()))
            .collect();
        Box::pin(async move { rows })
    }
    fn save(&self, session_id: &str, key: &str, injection: &Injection) {
        self.rows
            .lock()
            .unwrap()
            .push((session_id.into(), key.into(), injection.clone()));
    }
    fn release(&self) {
        self.released.fetch_add(1, Ordering::Relaxed);
    }
}

fn inj(b: &str) -> Injection {
    Injection {
        block: b.into(),
        skills: vec!["skill".into()],
    }
}

/// The block a message gets the first time: distinct per message, a few hundred bytes.
fn block_for(i: usize) -> String {
    format!("block {i} ").repeat(40)
}

fn small() -> Limits {
    Limits {
        sessions: 16,
        session_blocks: 8,
        session_bytes: 64 << 10,
        total_bytes: 256 << 10,
    }
}

async fn one(sticky: &Sticky, session: &str, key: &str) -> Option<Arc<Injection>> {
    let blocks = sticky.session(session);
    let key = [key.to_string()];
    sticky.recall(session, &blocks, &key).await.pop().flatten()
}

#[tokio::test]
async fn first_block_wins_and_survives_forgetting() {
    let store = Arc::new(Recorded::default());
    let sticky = Sticky::new(store.clone());
    let s = sticky.session("s1");
    assert_eq!(sticky.remember("s1", &s, "k", inj("A")).block, "A");
    assert_eq!(sticky.remember("s1", &s, "k", inj("B")).block, "A");
    assert_eq!(
        store.rows.lock().unwrap().len(),
        1,
        "only the first is saved"
    );

    sticky.forget("s1");
    assert_eq!(sticky.open_sessions(), 0);
    assert_eq!(
        (sticky.blocks_in_memory(), sticky.bytes_in_memory()),
        (0, 0)
    );
    assert_eq!(
        one(&sticky, "s1", "k").await.unwrap().block,
        "A",
        "from the store"
    );
    assert!(one(&sticky, "s2", "k").await.is_none());
}

/// A conversation far longer than the window: each turn resends a few recent messages and
/// adds one. Old messages come back byte for byte (from memory or the store), and memory
/// never holds more than the window.
#[tokio::test]
async fn a_long_session_stays_within_its_window_and_old_blocks_come_back() {
    let store = Arc::new(Recorded::default());
    let limits = small();
    let sticky = Sticky::with_limits(store.clone(), limits);
    let key = |i: usize| format!("m{i}");
    for turn in 0..200_usize {
        let blocks = sticky.session("long");
        let keys: Vec<String> = (turn.saturating_sub(4)..=turn).map(key).collect();
        let known = sticky.recall("long", &blocks, &keys).await;
        for (k, b) in keys.iter().zip(&known).take(keys.len() - 1) {
            let i: usize = k[1..].parse().unwrap();
            assert_eq!(b.as_deref().map(|b| b.block.clone()), Some(block_for(i)));
        }
        assert!(
            known.last().unwrap().is_none(),
            "turn {turn}: the newest is new"
        );
        sticky.remember("long", &blocks, &key(turn), inj(&block_for(turn)));
        assert!(
            blocks.len() <= limits.session_blocks,
            "turn {turn}: {}",
            blocks.len()
        );
        assert!(sticky.blocks_in_memory() <= limits.session_blocks);
    }
    // The very first message left memory long ago; resent, it gets its block back.
    store.asked.lock().unwrap().clear();
    let first = one(&sticky, "long", "m0").await.unwrap();
    assert_eq!(first.block, block_for(0));
    assert_eq!(first.skills, vec!["skill".to_string()]);
    assert_eq!(*store.asked.lock().unwrap(), vec!["m0".to_string()]);
    assert_eq!(
        store.rows.lock().unwrap().len(),
        200,
        "every block saved once"
    );
}

#[tokio::test]
async fn the_store_is_asked_only_for_what_memory_lacks() {
    let store = Arc::new(Recorded::default());
    let sticky = Sticky::new(store.clone());
    let blocks = sticky.session("s");
    sticky.remember("s", &blocks, "a", inj("A"));
    let keys = ["a".to_string(), "b".to_string(), "b".to_string()];
    let known = sticky.recall("s", &blocks, &keys).await;
    assert_eq!(known[0].as_ref().unwrap().block, "A");
    assert!(known[1].is_none() && known[2].is_none());
    assert_eq!(*store.asked.lock().unwrap(), vec!["b".to_string()]);
}

/// Many conversations: memory holds at most the byte budget and the session count, the
/// most recent sessions stay, and an evicted one's blocks come back from the store.
#[tokio::test]
async fn many_sessions_stay_within_the_budget() {
    let store = Arc::new(Recorded::default());
    let limits = small();
    let sticky = Sticky::with_limits(store.clone(), limits);
    for s in 0..500 {
        let id = format!("s{s}");
        let blocks = sticky.session(&id);
        for m in 0..3 {
            sticky.remember(&id, &blocks, &format!("m{m}"), inj(&block_for(s * 10 + m)));
        }
        assert!(
            sticky.bytes_in_memory() <= limits.total_bytes,
            "session {s}"
        );
        assert!(sticky.open_sessions() <= limits.sessions, "session {s}");
    }
    assert!(sticky.blocks_in_memory() > 0);
    assert!(sticky.sessions.lock().unwrap().contains_key("s499"));
    assert!(!sticky.sessions.lock().unwrap().contains_key("s0"));
    assert_eq!(
        one(&sticky, "s0", "m2").await.unwrap().block,
        block_for(2),
        "read back"
    );
    // The counters match what the sessions hold.
    let held: usize = sticky
        .sessions
        .lock()
        .unwrap()
        .values()
        .map(|s| s.len())
        .sum();
    assert_eq!(held, sticky.blocks_in_memory());
}

/// A turn still holding a session that was evicted meanwhile saves its block to the store
/// but leaves memory's counters alone.
#[tokio::test]
async fn a_block_kept_for_an_evicted_session_is_saved_not_counted() {
    let store = Arc::new(Recorded::default());
    let sticky = Sticky::new(store.clone());
    let held = sticky.session("gone");
    sticky.forget("gone");
    let kept = sticky.remember("gone", &held, "k", inj("late"));
    assert_eq!(kept.block, "late");
    assert_eq!(
        (sticky.blocks_in_memory(), sticky.bytes_in_memory()),
        (0, 0)
    );
    assert_eq!(one(&sticky, "gone", "k").await.unwrap().block, "late");
}

#[tokio::test]
async fn going_quiet_empties_memory_and_every_block_comes_back_from_the_store() {
    let store = Arc::new(Recorded::default());
    let sticky = Sticky::with_limits(store.clone(), small());
    for (session, i) in [("a", 0), ("a", 1), ("b", 2)] {
        let blocks = sticky.session(session);
        sticky.remember(session, &blocks, &format!("k{i}"), inj(&block_for(i)));
    }
    assert_eq!(sticky.blocks_in_memory(), 3);

    sticky.release_memory();
    assert_eq!(
        (sticky.blocks_in_memory(), sticky.bytes_in_memory()),
        (0, 0)
    );
    assert_eq!(sticky.open_sessions(), 0);
    assert_eq!(store.released.load(Ordering::Relaxed), 1);

    for (session, i) in [("a", 0), ("a", 1), ("b", 2)] {
        let back = one(&sticky, session, &format!("k{i}")).await;
        assert_eq!(back.map(|b| b.block.clone()), Some(block_for(i)));
    }
    assert_eq!(store.asked.lock().unwrap().len(), 3, "each read back once");
    assert_eq!(sticky.blocks_in_memory(), 3, "and kept again");
}
