//! The benchmark's own parts: the large library (`bench --library`) seeds what MetaClaw
//! reads, so the figures measure retrieval that finds something; the paused stream
//! (`--chunk-gap-ms`) really arrives in pieces, so the measured gaps are the fake's pauses.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use metaclaw_e2e::bench::client::{Conn, QUESTIONS, Target, Workload};
use metaclaw_e2e::bench::library::{self, Size};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_memory::{RetrievalPolicy, retrieve_for_prompt};
use metaclaw_store::Store;

#[test]
fn the_seeded_library_parses_imports_and_answers_the_bench_questions() {
    let home = tempfile::tempdir().unwrap();
    library::seed(
        home.path(),
        Size {
            skills: 40,
            memories: 600,
        },
    )
    .unwrap();

    let folders: Vec<_> = std::fs::read_dir(home.path().join("skills"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 40);
    for folder in &folders {
        let path = folder.join("SKILL.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (skill, _) = metaclaw_skills::parse_skill(&text, Some(&path)).unwrap();
        assert_eq!(
            Some(skill.name.as_str()),
            folder.file_name().unwrap().to_str()
        );
    }

    let store = Store::open(&home.path().join("metaclaw.db")).unwrap();
    let count: i64 = store
        .connection()
        .query_row(
            "SELECT COUNT(*) FROM memory_units WHERE scope = 'default' AND status = 'active'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(count, 600);
    let policy = RetrievalPolicy::default();
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let answered = QUESTIONS
        .iter()
        .filter(|q| {
            retrieve_for_prompt(store.connection(), "default", q, 800, &policy, now_ms)
                .unwrap()
                .is_some()
        })
        .count();
    // Most of the bench's questions find memories to inject (one asks only to say hello).
    assert!(
        answered >= QUESTIONS.len() / 2,
        "{answered} of {} questions found memories",
        QUESTIONS.len()
    );
}

#[tokio::test]
async fn a_paused_stream_arrives_in_pieces_at_least_the_pause_apart() {
    let gap = Duration::from_millis(15);
    let fake = FakeUpstream::start(FakeOptions {
        fast: true,
        chunk_gap: Some(gap),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let target = Target {
        addr: fake.addr(),
        bearer: "any".into(),
        stream: true,
        workload: Workload::Hello,
    };
    let sample = Conn::open(fake.addr())
        .await
        .unwrap()
        .call(&target)
        .await
        .unwrap();
    assert!(sample.ttft.is_some());
    assert!(sample.gaps.len() >= 2, "{:?}", sample.gaps);
    assert!(sample.gaps.iter().all(|g| *g >= gap), "{:?}", sample.gaps);
}
