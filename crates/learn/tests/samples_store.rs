//! The sample store: exact tokens and logprobs round-trip, validation, judge states,
//! batches by skill generation, all-or-nothing consumption, and survival across a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use metaclaw_learn::{LearnError, SampleStore};
use metaclaw_store::{JudgeState, NewSample, SampleStatus};

pub fn sample(session: &str, turn: i64, generation: i64) -> NewSample {
    NewSample {
        session_id: session.to_owned(),
        turn_index: turn,
        skill_generation: generation,
        prompt_tokens: vec![3, 1, 4, 1, 5],
        completion_tokens: vec![9, 2, 6],
        completion_logprobs: vec![-0.125, -1.5, -0.000_123_4],
        sampler_path: Some("tinker://run/sampler_weights/step_000001".to_owned()),
        instruction: "list the files".to_owned(),
        response_text: "here they are".to_owned(),
        created_at_ms: 1_000 + turn,
        carried: Vec::new(),
        held_out: false,
    }
}

#[test]
fn exact_tokens_and_logprobs_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let new = sample("s1", 1, 0);
    let id = store.insert(&new).unwrap();
    let row = store.get(id).unwrap().unwrap();
    assert_eq!(row.prompt_tokens, new.prompt_tokens);
    assert_eq!(row.completion_tokens, new.completion_tokens);
    // Bit-exact, not merely close.
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&row.completion_logprobs),
        bits(&new.completion_logprobs)
    );
    assert_eq!(row.judge, JudgeState::Pending);
    assert_eq!(row.status, SampleStatus::Waiting);
    assert_eq!(row.turn_index, 1);
    assert_eq!(row.created_at_ms, 1_001);
}

#[test]
fn mismatched_logprobs_are_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let mut bad = sample("s1", 1, 0);
    bad.completion_logprobs.pop();
    let err = store.insert(&bad).unwrap_err();
    assert!(matches!(err, LearnError::Store(_)));
    let msg = err.to_string();
    assert!(msg.contains("3 completion tokens but 2 logprobs"), "{msg}");
    let mut empty = sample("s1", 2, 0);
    empty.completion_tokens.clear();
    empty.completion_logprobs.clear();
    assert!(
        store
            .insert(&empty)
            .unwrap_err()
            .to_string()
            .contains("no tokens")
    );
    assert_eq!(store.counts().unwrap().waiting, 0);
}

#[test]
fn judge_states_and_next_turn_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let a = store.insert(&sample("s1", 1, 0)).unwrap();
    let b = store.insert(&sample("s1", 2, 0)).unwrap();
    // No evidence yet: nothing to judge.
    assert!(
        store
            .with(|s| s.samples_to_judge(0, 10))
            .unwrap()
            .is_empty()
    );
    store
        .with(|s| s.set_sample_next_state(a, "thanks"))
        .unwrap();
    assert_eq!(
        store.record_next_turn("s1", "that was wrong").unwrap(),
        Some(b)
    );
    assert_eq!(store.record_next_turn("nobody", "x").unwrap(), None);
    let due = store.with(|s| s.samples_to_judge(0, 10)).unwrap();
    assert_eq!(due.iter().map(|r| r.id).collect::<Vec<_>>(), vec![a, b]);
    assert_eq!(due[1].next_state.as_deref(), Some("that was wrong"));

    store
        .with(|s| s.set_sample_score(a, 1.0, &[Some(1), None, Some(1)]))
        .unwrap();
    let attempts = store.with(|s| s.hold_sample(b, "HTTP 503", 5_000)).unwrap();
    assert_eq!(attempts, 1);
    let row = store.get(a).unwrap().unwrap();
    assert_eq!(
        row.judge,
        JudgeState::Scored {
            reward: 1.0,
            votes: vec![Some(1), None, Some(1)]
        }
    );
    // Held until its retry time, then due again.
    assert!(
        store
            .with(|s| s.samples_to_judge(4_999, 10))
            .unwrap()
            .is_empty()
    );
    let due = store.with(|s| s.samples_to_judge(5_000, 10)).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(
        due[0].judge,
        JudgeState::Held {
            error: "HTTP 503".into(),
            attempts: 1
        }
    );
    let c = store.counts().unwrap();
    assert_eq!((c.waiting, c.unjudged, c.held), (2, 1, 1));
}

#[test]
fn batches_are_oldest_first_of_the_current_generation_and_drop_older_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let old1 = store.insert(&sample("s1", 1, 0)).unwrap();
    let old2 = store.insert(&sample("s1", 2, 0)).unwrap();
    let mut ids = Vec::new();
    for t in 3..8 {
        ids.push(store.insert(&sample("s2", t, 1)).unwrap());
    }
    for id in [old1, old2, ids[0], ids[1], ids[2], ids[3]] {
        store
            .with(|s| s.set_sample_score(id, 1.0, &[Some(1)]))
            .unwrap();
    }
    let take = store.with(|s| s.take_sample_batch(1, 3, true)).unwrap();
    assert_eq!(take.dropped, 2);
    assert_eq!(
        take.samples.iter().map(|r| r.id).collect::<Vec<_>>(),
        ids[..3].to_vec()
    );
    assert_eq!(
        store.get(old1).unwrap().unwrap().status,
        SampleStatus::Dropped
    );
    // Unscored samples come along only when asked.
    let all = store.with(|s| s.take_sample_batch(1, 10, false)).unwrap();
    assert_eq!(all.samples.len(), 5);
    assert_eq!(all.dropped, 0);
    let scored = store.with(|s| s.take_sample_batch(1, 10, true)).unwrap();
    assert_eq!(scored.samples.len(), 4);

    // Taking consumes nothing; consuming is all or nothing.
    let err = store.with(|s| s.mark_samples_consumed(&[ids[0], old1], 7));
    assert!(err.is_err());
    assert_eq!(
        store.get(ids[0]).unwrap().unwrap().status,
        SampleStatus::Waiting
    );
    store
        .with(|s| s.mark_samples_consumed(&ids[..2], 7))
        .unwrap();
    assert_eq!(
        store.get(ids[1]).unwrap().unwrap().status,
        SampleStatus::Consumed { step: 7 }
    );
    let next = store.with(|s| s.take_sample_batch(1, 10, true)).unwrap();
    assert_eq!(
        next.samples.iter().map(|r| r.id).collect::<Vec<_>>(),
        ids[2..4].to_vec()
    );
    let c = store.counts().unwrap();
    assert_eq!((c.waiting, c.consumed, c.dropped), (3, 2, 2));
}

#[test]
fn samples_survive_reopening_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.db");
    let id = {
        let store = SampleStore::open(&path).unwrap();
        let id = store.insert(&sample("s1", 1, 2)).unwrap();
        store
            .with(|s| s.set_sample_score(id, -1.0, &[Some(-1)]))
            .unwrap();
        id
    };
    let store = SampleStore::open(&path).unwrap();
    let row = store.get(id).unwrap().unwrap();
    assert_eq!(row.completion_tokens, vec![9, 2, 6]);
    assert_eq!(row.reward(), Some(-1.0));
    let take = store.with(|s| s.take_sample_batch(2, 4, true)).unwrap();
    assert_eq!(take.samples.len(), 1);
}
