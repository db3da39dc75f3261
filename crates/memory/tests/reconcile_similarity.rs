#![allow(clippy::unwrap_used, clippy::panic)]
//! Calibration of the thresholds on hand-written pairs: every restatement scores at or above
//! `DUPLICATE_THRESHOLD` and every distinct fact below it, except the `hard` pairs (a
//! one-token value change in a long CJK sentence), which stay below
//! `DIFFERENT_SLOT_THRESHOLD`.

use metaclaw_memory::reconcile::{DIFFERENT_SLOT_THRESHOLD, DUPLICATE_THRESHOLD, similarity};
use serde_json::Value;

#[test]
fn threshold_separates_restatements_from_distinct_facts() {
    let fixture: Value =
        serde_json::from_str(include_str!("fixtures/similarity_pairs.json")).unwrap();
    let mut lowest_same = f32::MAX;
    let mut highest_different = f32::MIN;
    let mut report = String::new();
    for pair in fixture["pairs"].as_array().unwrap() {
        let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
        let s = similarity(a, b);
        assert!(
            (s - similarity(b, a)).abs() < 1e-6,
            "not symmetric: {a} / {b}"
        );
        report.push_str(&format!("{s:.3} same={} {a} | {b}\n", pair["same"]));
        if pair["same"].as_bool().unwrap() {
            lowest_same = lowest_same.min(s);
        } else if pair["hard"].as_bool() == Some(true) {
            assert!(s < DIFFERENT_SLOT_THRESHOLD, "{s:.3} {a} | {b}");
        } else {
            highest_different = highest_different.max(s);
        }
    }
    assert!(
        lowest_same >= DUPLICATE_THRESHOLD && highest_different < DUPLICATE_THRESHOLD,
        "lowest restatement {lowest_same:.3}, highest distinct {highest_different:.3}, \
         threshold {DUPLICATE_THRESHOLD}\n{report}"
    );
}

#[test]
fn similarity_edges() {
    assert_eq!(similarity("", "anything"), 0.0);
    assert_eq!(similarity("Tabs!", "tabs"), 1.0);
    assert!(similarity("我喜欢深色主题", "我喜欢浅色主题") < 1.0);
}
