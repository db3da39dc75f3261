use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use metaclaw_proxy::seams::{
    EndReason, Protocol, ReplyCapture, SessionEvent, TurnRecord, TurnSink, TurnType,
};
use metaclaw_store::Store;
use serde_json::Value;

use super::{RecorderWorker, handle, start};

const OPENAI_SSE: [&str; 4] = [
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\
     \"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\
     \"finish_reason\":null}]}\n\ndata: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",",
    "\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\
     \"finish_reason\":\"stop\"}]}\n\n",
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\
     \"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":2,\"total_tokens\":13}}\n\n",
    "data: [DONE]\n\n",
];

const ANTHROPIC_SSE: [&str; 3] = [
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\
     \"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\
     \"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":20,\
     \"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\
     \"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
     \"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\nevent: content_block_stop\n\
     data: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_de",
    "lta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\
     \"stop_sequence\":null},\"usage\":{\"output_tokens\":3}}\n\n\
     event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
];

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn record(session: &str, protocol: Protocol, reply: ReplyCapture) -> TurnRecord {
    TurnRecord {
        session_id: session.to_owned(),
        turn_type: TurnType::Main,
        scope: "default".to_owned(),
        client_protocol: protocol,
        upstream_protocol: Protocol::Openai,
        upstream: "primary".to_owned(),
        model: "m".to_owned(),
        request: Bytes::from_static(br#"{"messages":[{"role":"user","content":"hi"}]}"#),
        reply,
        status: 200,
        error: None,
        overhead_ms: 0.3,
        ttft_ms: Some(15.0),
        total_ms: 50.0,
        started_at: at(1_700_000_000_000),
        skill_generation: 4,
        injected_skills: vec!["run-tests".to_owned()],
        figures: Default::default(),
    }
}

fn sse(parts: &[&'static str]) -> ReplyCapture {
    ReplyCapture::Sse(
        parts
            .iter()
            .map(|p| Bytes::from_static(p.as_bytes()))
            .collect(),
    )
}

fn reply_of(row: &metaclaw_store::TurnRow) -> Value {
    serde_json::from_str(row.reply_json.as_deref().unwrap()).unwrap()
}

fn db(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("metaclaw.db")
}

fn read(path: &Path) -> Store {
    Store::open_read_only(path).unwrap()
}

#[test]
fn flushed_turns_are_stored_with_assembled_replies_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, worker) = start(&db(&dir), 64).unwrap();
    const N: usize = 5;
    for _ in 0..N {
        handle.turn_finished(record("oa", Protocol::Openai, sse(&OPENAI_SSE)));
        handle.turn_finished(record("an", Protocol::Anthropic, sse(&ANTHROPIC_SSE)));
    }
    let json = br#"{"id":"c2","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":4}}"#;
    handle.turn_finished(record(
        "js",
        Protocol::Openai,
        ReplyCapture::Json(Bytes::from_static(json)),
    ));
    handle.flush().unwrap();
    assert_eq!(handle.queue_depth(), 0);

    let store = read(&db(&dir));
    assert_eq!(store.stats().unwrap().turns, 2 * N as u64 + 1);

    let openai = store.session_turns("oa").unwrap();
    assert_eq!(openai.len(), N);
    for (i, row) in openai.iter().enumerate() {
        assert_eq!(row.turn_index, i as u64);
        let reply = reply_of(row);
        assert_eq!(reply["choices"][0]["message"]["content"], "Hello");
        assert_eq!(reply["choices"][0]["finish_reason"], "stop");
        assert_eq!((row.input_tokens, row.output_tokens), (Some(11), Some(2)));
        assert_eq!(row.error, None);
        assert!(row.request_json.contains("\"hi\""));
        assert_eq!(row.created_at_ms, 1_700_000_000_000);
        assert_eq!(row.skill_generation, 4);
        assert_eq!(row.injected_skills, vec!["run-tests".to_owned()]);
    }

    let anthropic = store.session_turns("an").unwrap();
    assert_eq!(anthropic.len(), N);
    for row in &anthropic {
        let reply = reply_of(row);
        assert_eq!(reply["content"][0]["text"], "Hi");
        assert_eq!(reply["stop_reason"], "end_turn");
        assert_eq!((row.input_tokens, row.output_tokens), (Some(20), Some(3)));
        assert_eq!(row.client_protocol, "anthropic");
    }

    let plain = &store.session_turns("js").unwrap()[0];
    assert_eq!(
        plain.reply_json.as_deref(),
        Some(std::str::from_utf8(json).unwrap())
    );
    assert_eq!(
        (plain.input_tokens, plain.output_tokens),
        (Some(7), Some(4))
    );
    worker.shutdown().unwrap();
}

#[test]
fn an_unassemblable_stream_keeps_the_turn_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, worker) = start(&db(&dir), 8).unwrap();
    let mut broken = record("s", Protocol::Anthropic, sse(&["data: not json\n\n"]));
    broken.error = Some("upstream stream broke".to_owned());
    handle.turn_finished(broken);
    handle.turn_finished(record("s", Protocol::Openai, ReplyCapture::None));
    handle.flush().unwrap();

    let rows = read(&db(&dir)).session_turns("s").unwrap();
    assert_eq!(rows[0].reply_json, None);
    let error = rows[0].error.as_deref().unwrap();
    assert!(
        error.starts_with("upstream stream broke; reply not assembled"),
        "{error}"
    );
    assert!(error.contains("data: not json"), "{error}");
    assert_eq!(
        (rows[1].reply_json.as_deref(), rows[1].error.as_deref()),
        (None, None)
    );
    worker.shutdown().unwrap();
}

#[test]
fn a_full_queue_drops_without_blocking_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    // No worker yet: nothing drains the queue, so it fills up.
    let (handle, queue) = handle::channel(3);
    for _ in 0..10 {
        handle.turn_finished(record("s", Protocol::Openai, ReplyCapture::None));
    }
    assert_eq!(handle.queue_depth(), 3);
    assert_eq!(handle.dropped(), 7);
    let health = handle.health();
    assert_eq!(health.dropped_queue_full, 7);
    assert!(health.last_dropped_at_ms.is_some());

    let store = Store::open(&db(&dir)).unwrap();
    let worker = RecorderWorker::spawn(store, queue, handle.clone(), None).unwrap();
    handle.flush().unwrap();
    assert_eq!(handle.queue_depth(), 0);
    assert_eq!(read(&db(&dir)).stats().unwrap().turns, 3);
    worker.shutdown().unwrap();
}

/// A valid request body of exactly `len` bytes.
fn padded_request(len: usize) -> Bytes {
    let head = br#"{"messages":[{"role":"user","content":""#;
    let tail = br#""}]}"#;
    let mut body = head.to_vec();
    body.resize(len - tail.len(), b'x');
    body.extend_from_slice(tail);
    Bytes::from(body)
}

#[test]
fn heavy_turns_are_bounded_by_bytes_not_only_by_count() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, queue) = handle::channel(4096);
    // Each turn carries a 1 MiB history: far fewer than the queue's count fit in its bytes.
    let heavy = || {
        let mut turn = record("s", Protocol::Openai, ReplyCapture::None);
        turn.request = padded_request(1024 * 1024);
        turn
    };
    for _ in 0..20 {
        handle.turn_finished(heavy());
    }
    let kept = handle.queue_depth();
    assert_eq!(kept, handle::MAX_QUEUED_BYTES / (1024 * 1024));
    assert_eq!(handle.dropped(), 20 - kept as u64);

    // Once the worker drains the queue its weight is gone and heavy turns fit again.
    let store = Store::open(&db(&dir)).unwrap();
    let worker = RecorderWorker::spawn(store, queue, handle.clone(), None).unwrap();
    handle.flush().unwrap();
    handle.turn_finished(heavy());
    handle.flush().unwrap();
    assert_eq!(read(&db(&dir)).stats().unwrap().turns, kept as u64 + 1);
    assert_eq!(handle.dropped(), 20 - kept as u64);
    worker.shutdown().unwrap();
}

#[test]
fn a_turn_heavier_than_the_bound_is_still_recorded_when_the_queue_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, worker) = start(&db(&dir), 16).unwrap();
    let mut turn = record("s", Protocol::Openai, ReplyCapture::None);
    turn.request = padded_request(handle::MAX_QUEUED_BYTES + 1);
    handle.turn_finished(turn);
    handle.flush().unwrap();
    assert_eq!(handle.dropped(), 0);
    assert_eq!(read(&db(&dir)).stats().unwrap().turns, 1);
    worker.shutdown().unwrap();
}

#[test]
fn session_events_open_and_close_sessions_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, worker) = start(&db(&dir), 16).unwrap();
    handle.session_event(&SessionEvent::Started {
        session_id: "s".to_owned(),
        scope: "work".to_owned(),
        at: at(1_000),
    });
    let mut side = record("s", Protocol::Openai, ReplyCapture::None);
    side.turn_type = TurnType::Side;
    handle.turn_finished(record("s", Protocol::Openai, ReplyCapture::None));
    handle.turn_finished(side);
    handle.session_event(&SessionEvent::Ended {
        session_id: "s".to_owned(),
        scope: "work".to_owned(),
        reason: EndReason::Idle,
        main_turns: 1,
        at: at(2_000),
    });
    handle.flush().unwrap();

    let store = read(&db(&dir));
    let session = store.session("s").unwrap().unwrap();
    assert_eq!(session.scope, "work");
    assert_eq!(session.started_at_ms, 1_000);
    assert_eq!(session.ended_at_ms, Some(2_000));
    assert_eq!(session.end_reason.as_deref(), Some("idle"));
    assert_eq!((session.main_turns, session.side_turns), (1, 1));
    assert_eq!(store.stats().unwrap().open_sessions, 0);
    worker.shutdown().unwrap();
}

#[test]
fn shutdown_commits_everything_queued() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, worker) = start(&db(&dir), 1024).unwrap();
    for i in 0..600 {
        handle.turn_finished(record(
            &format!("s{}", i % 7),
            Protocol::Openai,
            sse(&OPENAI_SSE),
        ));
    }
    worker.shutdown().unwrap();
    assert_eq!(handle.dropped(), 0);
    assert_eq!(read(&db(&dir)).stats().unwrap().turns, 600);

    // After shutdown nothing blocks: turns are dropped and counted, flushes fail.
    handle.turn_finished(record("late", Protocol::Openai, ReplyCapture::None));
    assert_eq!(handle.dropped(), 1);
    assert!(handle.flush().is_err());
}

#[test]
fn dropping_the_worker_also_commits() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, worker) = start(&db(&dir), 64).unwrap();
    for _ in 0..20 {
        handle.turn_finished(record("s", Protocol::Anthropic, sse(&ANTHROPIC_SSE)));
    }
    drop(worker);
    assert_eq!(read(&db(&dir)).session_turns("s").unwrap().len(), 20);
}

#[test]
fn a_deleted_database_is_named_and_its_turns_counted_as_lost() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, worker) = start(&db(&dir), 64).unwrap();
    handle.turn_finished(record("s", Protocol::Openai, ReplyCapture::None));
    handle.flush().unwrap();
    assert_eq!(handle.health(), Default::default());

    std::fs::remove_file(db(&dir)).unwrap();
    for _ in 0..4 {
        handle.turn_finished(record("s", Protocol::Openai, ReplyCapture::None));
    }
    handle.flush().unwrap();
    let health = handle.health();
    assert_eq!(health.failed_writes, 4);
    let problem = health.database_problem.unwrap();
    assert!(problem.contains("metaclaw.db was deleted"), "{problem}");
    assert_eq!(health.last_write_error.as_deref(), Some(problem.as_str()));
    assert!(health.last_write_error_at_ms.is_some());
    worker.shutdown().unwrap();
}

#[test]
fn a_refused_write_is_counted_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, worker) = start(&db(&dir), 64).unwrap();
    // What a full disk looks like to the recorder: every insert fails.
    let conn = rusqlite::Connection::open(db(&dir)).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER full BEFORE INSERT ON turns BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
    )
    .unwrap();
    for _ in 0..3 {
        handle.turn_finished(record("s", Protocol::Openai, ReplyCapture::None));
    }
    handle.flush().unwrap();
    let health = handle.health();
    assert_eq!(health.failed_writes, 3);
    let error = health.last_write_error.unwrap();
    assert!(error.contains("database or disk is full"), "{error}");
    assert_eq!(health.database_problem, None);
    worker.shutdown().unwrap();
}

#[test]
fn a_turns_figures_are_stored_with_it_and_the_upstreams_usage_wins() {
    use metaclaw_proxy::seams::{TokenUsage, TurnFigures};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let (handle, _worker) = start(&db(&dir), 64).unwrap();
    let sink: Arc<dyn TurnSink> = Arc::new(handle.clone());
    // The client saw no usage (it did not ask); the upstream's was read on the way.
    let mut withheld = record("w", Protocol::Openai, sse(&OPENAI_SSE[..2]));
    withheld.started_at = at(1_700_000_000_001);
    withheld.figures = TurnFigures {
        injected_memories: vec!["m1".into()],
        injected_tokens: 120,
        block_tokens: 40,
        upstream_usage: Some(TokenUsage {
            input_tokens: Some(500),
            output_tokens: Some(2),
            cache_read_tokens: Some(448),
            cache_write_tokens: Some(30),
        }),
        held_out: false,
    };
    sink.turn_finished(withheld);
    // A turn without figures of its own is not given another turn's.
    sink.turn_finished(record("w", Protocol::Openai, sse(&OPENAI_SSE)));
    handle.flush().unwrap();

    let rows = read(&db(&dir)).session_usage("w").unwrap();
    assert_eq!(rows.len(), 2);
    let (first, second) = (&rows[0], &rows[1]);
    assert_eq!(
        (first.input_tokens, first.output_tokens),
        (Some(500), Some(2))
    );
    assert_eq!(
        (first.cache_read_tokens, first.cache_write_tokens),
        (Some(448), Some(30))
    );
    assert_eq!(
        (first.injected_tokens, first.block_tokens),
        (Some(120), Some(40))
    );
    assert_eq!(first.injected_memories, ["m1"]);
    assert_eq!(
        (second.input_tokens, second.output_tokens),
        (Some(11), Some(2))
    );
    assert_eq!(second.cache_read_tokens, None);
    assert_eq!(
        (second.injected_tokens, second.block_tokens),
        (Some(0), Some(0))
    );
    assert!(second.injected_memories.is_empty());
}

#[test]
fn releasing_the_page_cache_at_rest_loses_no_turn() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, worker) = start(&db(&dir), 64).unwrap();
    handle.turn_finished(record("r", Protocol::Openai, sse(&OPENAI_SSE)));
    // Queued behind the turn: the turn is committed first, then the cache let go.
    handle.release_memory();
    let mut later = record("r", Protocol::Openai, sse(&OPENAI_SSE));
    later.started_at = at(1_700_000_000_500);
    handle.turn_finished(later);
    handle.flush().unwrap();
    assert_eq!(read(&db(&dir)).session_turns("r").unwrap().len(), 2);
    assert_eq!(handle.health().failed_writes, 0);
    worker.shutdown().unwrap();
}

/// A database from before schema v9, as its tests build one (raw SQL, every request whole).
#[path = "../../../store/tests/legacy_v8/mod.rs"]
mod legacy_v8;
#[path = "../../../store/tests/workload/mod.rs"]
mod workload;

#[test]
fn earlier_turns_are_converted_in_the_background_while_new_ones_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let chat = workload::Chat {
        conversations: 4,
        turns: 60,
        ..workload::AGENT_CHAT
    };
    let old = workload::chat_turns(&chat, 7);
    let mut conn = legacy_v8::create(&path).unwrap();
    legacy_v8::insert(&mut conn, &old).unwrap();
    drop(conn);

    // Opening converts nothing (`Store::open`, tested in the store); the recorder converts
    // between writes, and a new turn is recorded meanwhile.
    let (handle, worker) = start(&path, 64).unwrap();
    handle.turn_finished(record("new", Protocol::Openai, ReplyCapture::None));
    handle.flush().unwrap();
    assert_eq!(read(&path).session_turns("new").unwrap().len(), 1);

    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while read(&path).turns_to_convert().unwrap() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "conversion never finished"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let store = read(&path);
    let rows = store.recent_turns(old.len() + 1).unwrap();
    for (turn, row) in old.iter().zip(rows.iter().rev()) {
        assert_eq!(row.request_json, turn.request_json);
        assert_eq!(row.reply_json, turn.reply_json);
    }
    store.integrity_check().unwrap();
    worker.shutdown().unwrap();
}
