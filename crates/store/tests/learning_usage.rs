//! Learning's cost per day and purpose: counts add up across writes and reopenings.
#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_store::{LearningUsage, Store};

fn usage(day: &str, purpose: &str, calls: u64, input: u64) -> LearningUsage {
    LearningUsage {
        day: day.into(),
        purpose: purpose.into(),
        calls,
        failed: 1,
        input_tokens: input,
        output_tokens: 10,
        cache_read_tokens: 4,
        cache_write_tokens: 2,
    }
}

#[test]
fn counts_are_added_to_their_day_and_purpose() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let mut store = Store::open(&path).unwrap();
    store
        .add_learning_usage(&[
            usage("2026-12-03", "extraction", 1, 100),
            usage("2026-12-04", "evolution", 2, 300),
        ])
        .unwrap();
    drop(store);
    let mut store = Store::open(&path).unwrap();
    store
        .add_learning_usage(&[usage("2026-12-04", "evolution", 1, 50)])
        .unwrap();

    let all = store.learning_usage_since("2026-12-01").unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0], usage("2026-12-03", "extraction", 1, 100));
    let evolution = &all[1];
    assert_eq!(
        (evolution.day.as_str(), evolution.purpose.as_str()),
        ("2026-12-04", "evolution")
    );
    assert_eq!((evolution.calls, evolution.failed), (3, 2));
    assert_eq!((evolution.input_tokens, evolution.output_tokens), (350, 20));
    assert_eq!(
        (evolution.cache_read_tokens, evolution.cache_write_tokens),
        (8, 4)
    );
    assert_eq!(store.learning_usage_since("2026-12-04").unwrap().len(), 1);
}
