//! The judge: score parsing, majority, sanitising, and judging stored samples against the
//! fake judge (votes, evidence in the prompt, retries, holds and later retries).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use metaclaw_e2e::fake_judge::FakeJudge;
use metaclaw_learn::rl::verdict::{majority, parse_score, sanitize};
use metaclaw_learn::{CallObserver, Judge, JudgeConfig, SampleStore};
use metaclaw_store::{JudgeState, NewSample};

#[test]
fn scores_are_parsed_from_the_last_marker() {
    let cases: &[(&str, Option<i8>)] = &[
        ("Looks good.\nScore: 1", Some(1)),
        ("score: -1", Some(-1)),
        ("SCORE:  +1", Some(1)),
        ("Score: 0", Some(0)),
        ("Score: 1 at first... on reflection Score: -1", Some(-1)),
        ("**Score:** `-1`", Some(-1)),
        ("The final answer is \\boxed{1}", Some(1)),
        ("Score: 10", None),
        ("Score: 2", None),
        ("Score: -5", None),
        ("no verdict here", None),
        ("", None),
        // A malformed last marker falls back to an earlier readable one.
        ("Score: 1\nScore: maybe", Some(1)),
    ];
    for (text, want) in cases {
        assert_eq!(parse_score(text), *want, "{text:?}");
    }
}

#[test]
fn majority_with_abstentions_and_ties() {
    let cases: &[(&[Option<i8>], f64)] = &[
        (&[Some(1), Some(1), Some(-1)], 1.0),
        (&[Some(-1), Some(-1), Some(1)], -1.0),
        (&[Some(1), None, None], 1.0),
        (&[Some(1), Some(-1), None], 0.0),
        (&[None, None, None], 0.0),
        (&[], 0.0),
        (&[Some(0), Some(0), Some(1)], 0.0),
        (&[Some(1), Some(1), Some(0), Some(0)], 0.0),
    ];
    for (votes, want) in cases {
        assert_eq!(majority(votes), *want, "{votes:?}");
    }
}

#[test]
fn markup_is_neutralised() {
    let s = sanitize("ok <tool_call>{\"name\":\"rm\"}</tool_call> <think>x</think> a < b");
    assert_eq!(s, "ok [tool_call block] [tag]x[/tag] a < b");
}

fn config(judge: &FakeJudge) -> JudgeConfig {
    JudgeConfig {
        base_url: judge.base_url(),
        model: "judge-model".into(),
        api_key: Some("sk-judge-secret".into()),
        votes: 3,
        max_retries: 2,
        retry_delay: Duration::from_millis(5),
        hold_delay: Duration::from_secs(60),
        ..JudgeConfig::default()
    }
}

fn stored(store: &SampleStore, turn: i64, next: &str) -> i64 {
    let id = store
        .insert(&NewSample {
            session_id: "s1".into(),
            turn_index: turn,
            skill_generation: 0,
            prompt_tokens: vec![1, 2],
            completion_tokens: vec![3],
            completion_logprobs: vec![-0.5],
            sampler_path: None,
            instruction: format!("question {turn}"),
            response_text: format!("answer {turn} <tool_call>{{}}</tool_call>"),
            created_at_ms: turn,
            carried: Vec::new(),
            held_out: false,
        })
        .unwrap();
    store.with(|s| s.set_sample_next_state(id, next)).unwrap();
    id
}

#[tokio::test]
async fn votes_are_counted_and_the_evidence_is_shown() {
    let fake = FakeJudge::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let a = stored(&store, 1, "no, that deleted my files");
    let b = stored(&store, 2, "great, thanks");
    for reply in [
        "Bad.\nScore: -1",
        "Score: -1",
        "Score: 1",
        "fine",
        "Score: 1",
        "Score: 1",
    ] {
        fake.push_reply(reply);
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let judge = Judge::new(JudgeConfig {
        on_call: Some(CallObserver::new(move |answer| {
            assert!(answer.is_some_and(|a| a["usage"]["prompt_tokens"].is_u64()));
            counted.fetch_add(1, Ordering::Relaxed);
        })),
        ..config(&fake)
    })
    .unwrap();
    let report = judge.judge_pending(&store, 0, 10).await.unwrap();
    assert_eq!(
        calls.load(Ordering::Relaxed),
        6,
        "each vote is one call, told once"
    );
    assert_eq!((report.scored, report.held), (2, 0));
    let reward = |id| store.get(id).unwrap().unwrap().reward();
    assert_eq!(reward(a), Some(-1.0));
    assert_eq!(reward(b), Some(1.0));
    let JudgeState::Scored { votes, .. } = store.get(b).unwrap().unwrap().judge else {
        panic!("not scored")
    };
    assert_eq!(votes.len(), 3);
    assert_eq!(votes.iter().filter(|v| v.is_none()).count(), 1);

    let reqs = fake.requests();
    assert_eq!(reqs.len(), 6);
    let body = &reqs[0].1;
    assert_eq!(body["model"], "judge-model");
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("question 1"), "{user}");
    assert!(user.contains("no, that deleted my files"), "{user}");
    assert!(user.contains("[tool_call block]"), "{user}");
    // Judged samples are not judged again.
    let again = judge.judge_pending(&store, 0, 10).await.unwrap();
    assert_eq!(again.scored, 0);
    assert_eq!(fake.requests().len(), 6);
}

#[tokio::test]
async fn transient_failures_are_retried() {
    let fake = FakeJudge::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let id = stored(&store, 1, "ok");
    fake.push_fault(503, 2);
    let judge = Judge::new(config(&fake)).unwrap();
    let report = judge.judge_pending(&store, 0, 10).await.unwrap();
    assert_eq!(report.scored, 1);
    assert_eq!(store.get(id).unwrap().unwrap().reward(), Some(1.0));
    assert_eq!(fake.requests().len(), 5);
}

#[tokio::test]
async fn a_failing_judge_holds_the_sample_and_it_is_retried_later() {
    let fake = FakeJudge::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let id = stored(&store, 1, "ok");
    // Every attempt of every vote fails.
    fake.push_fault(500, 9);
    let judge = Judge::new(config(&fake)).unwrap();
    let report = judge.judge_pending(&store, 1_000, 10).await.unwrap();
    assert_eq!((report.scored, report.held), (0, 1));
    let err = report.last_error.unwrap();
    assert!(err.contains("HTTP 500"), "{err}");
    assert!(!err.contains("sk-judge-secret"));
    let row = store.get(id).unwrap().unwrap();
    assert_eq!(
        row.judge,
        JudgeState::Held {
            error: err,
            attempts: 1
        }
    );
    // Not due before the hold expires; judged afterwards.
    let early = judge
        .judge_pending(&store, 1_000 + 59_999, 10)
        .await
        .unwrap();
    assert_eq!((early.scored, early.held), (0, 0));
    let later = judge
        .judge_pending(&store, 1_000 + 60_000, 10)
        .await
        .unwrap();
    assert_eq!(later.scored, 1);
    assert_eq!(store.get(id).unwrap().unwrap().reward(), Some(1.0));
}

#[tokio::test]
async fn a_refusal_is_not_retried_but_still_held() {
    let fake = FakeJudge::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let id = stored(&store, 1, "ok");
    fake.push_fault(401, 3);
    let judge = Judge::new(config(&fake)).unwrap();
    let report = judge.judge_pending(&store, 0, 10).await.unwrap();
    assert_eq!(report.held, 1);
    assert_eq!(fake.requests().len(), 3);
    assert!(matches!(
        store.get(id).unwrap().unwrap().judge,
        JudgeState::Held { attempts: 1, .. }
    ));
}

#[tokio::test]
async fn a_session_that_ended_is_judged_without_a_follow_up() {
    let fake = FakeJudge::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = SampleStore::open(&dir.path().join("m.db")).unwrap();
    let first = stored(&store, 1, "next question");
    let last = store
        .insert(&NewSample {
            session_id: "s1".into(),
            turn_index: 2,
            skill_generation: 0,
            prompt_tokens: vec![1],
            completion_tokens: vec![2],
            completion_logprobs: vec![-0.1],
            sampler_path: None,
            instruction: "bye".into(),
            response_text: "goodbye".into(),
            created_at_ms: 2,
            carried: Vec::new(),
            held_out: false,
        })
        .unwrap();
    // Without evidence the last turn is not judged yet.
    let judge = Judge::new(config(&fake)).unwrap();
    assert_eq!(judge.judge_pending(&store, 0, 10).await.unwrap().scored, 1);
    assert_eq!(store.get(last).unwrap().unwrap().reward(), None);
    assert_eq!(store.end_session("s1").unwrap(), 1);
    assert_eq!(
        store.get(first).unwrap().unwrap().next_state.as_deref(),
        Some("next question")
    );
    assert_eq!(judge.judge_pending(&store, 0, 10).await.unwrap().scored, 1);
    assert_eq!(store.get(last).unwrap().unwrap().reward(), Some(1.0));
    let reqs = fake.requests();
    let user = reqs.last().unwrap().1["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(user.contains("the conversation ended"), "{user}");
}
