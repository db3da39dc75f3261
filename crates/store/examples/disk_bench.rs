//! Bytes per turn on disk and write time per turn, the layout of schema v8 (every request
//! whole) against v9's (each part of a request stored once, compressed):
//! `cargo run --release -p metaclaw-store --example disk_bench`.
//!
//! Two generated workloads, each written turn by turn (one transaction per turn, as a
//! recorder that is keeping up does) into a fresh database file:
//!
//! - issue 34's: 10 conversations × 20 turns, a 6 KB system prompt, ~200-byte user messages
//!   and ~600-byte replies, the whole history resent each turn (OpenAI chat completions);
//! - OpenClaw-shaped: one conversation of 25 user messages, each answered after two tool
//!   rounds (3 requests), a ~28 KB system prompt and a ~12 KB tool list, tool results of
//!   1.5–6 KB, Anthropic messages with the prompt-cache breakpoint on the newest message.
//!
//! For each: the file's size after the last connection closed and after `VACUUM`, both
//! gross and net of the empty database's size (its schema pages), per turn; the mean and
//! 95th percentile write time of a turn (the fastest of three runs); the time to read every turn back (rebuilt and
//! checked byte for byte); and the v8 file converted in place by `Store::finish_conversion` (time, size
//! before and after `VACUUM`). `METACLAW_BENCH_DIR=/path` keeps the files there.
#![allow(clippy::print_stdout)]

#[path = "../tests/legacy_v8/mod.rs"]
mod legacy_v8;
#[path = "../tests/workload/mod.rs"]
mod workload;

use std::error::Error;
use std::path::Path;
use std::time::{Duration, Instant};

use metaclaw_store::{NewTurn, Store};
use rusqlite::Connection;
use serde_json::{Value, json};
use workload::{AGENT_CHAT, Words, chat_turns, new_turn};

type Res<T> = Result<T, Box<dyn Error>>;

fn main() -> Res<()> {
    let temp = tempfile::tempdir()?;
    let dir = match std::env::var_os("METACLAW_BENCH_DIR") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => temp.path().to_path_buf(),
    };
    std::fs::create_dir_all(&dir)?;
    let file = |name: String| -> Res<std::path::PathBuf> {
        let path = dir.join(name);
        remove(&path)?;
        Ok(path)
    };
    let empty_old = empty_size(&file("empty-v8.db".into())?, true)?;
    let empty_new = empty_size(&file("empty-v9.db".into())?, false)?;
    println!("empty database after VACUUM: v8 tables {empty_old} B, v9 (all tables) {empty_new} B");
    let workloads = [
        ("agent chat, 10 × 20 turns", chat_turns(&AGENT_CHAT, 1)),
        ("OpenClaw-shaped, tool rounds", openclaw_turns(2)),
    ];
    for (i, (name, turns)) in workloads.iter().enumerate() {
        let request_bytes: usize = turns.iter().map(|t| t.request_json.len()).sum();
        println!(
            "\n== {name}: {} turns, requests {:.1} KB per turn on average",
            turns.len(),
            request_bytes as f64 / turns.len() as f64 / 1024.0
        );
        // Written three times each, alternately, keeping the fastest run: the machine may be
        // busy with other work. The files are the same each time.
        let (old, new) = (file(format!("{i}-v8.db"))?, file(format!("{i}-v9.db"))?);
        let (mut old_write, mut new_write) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            remove(&old)?;
            remove(&new)?;
            old_write = faster(old_write, write_old(&old, turns)?);
            new_write = faster(new_write, write_new(&new, turns)?);
        }
        let migrated = file(format!("{i}-migrated.db"))?;
        std::fs::copy(&old, &migrated)?;
        let old_sizes = sizes(&old)?;
        let new_sizes = sizes(&new)?;
        line(
            "v8, whole requests",
            turns.len(),
            old_sizes,
            empty_old,
            &old_write,
        );
        line(
            "v9, parts once    ",
            turns.len(),
            new_sizes,
            empty_new,
            &new_write,
        );
        println!(
            "  read back: v8 {:.0} µs per turn, v9 {:.0} µs per turn (rebuilt, requests and replies byte-identical)",
            per_turn_us(read_old(&old, turns)?, turns.len()),
            per_turn_us(read_new(&new, turns)?, turns.len()),
        );
        let started = Instant::now();
        Store::open(&migrated)?.finish_conversion()?;
        let took = started.elapsed();
        let before_vacuum = std::fs::metadata(&migrated)?.len();
        read_new(&migrated, turns)?;
        let (_, vacuumed) = sizes(&migrated)?;
        println!(
            "  v8 file converted in place: {:.1} ms ({:.0} µs per turn); file {} → {} B, \
             {} B after VACUUM",
            took.as_secs_f64() * 1e3,
            per_turn_us(took, turns.len()),
            old_sizes.0,
            before_vacuum,
            vacuumed
        );
    }
    Ok(())
}

fn line(
    label: &str,
    turns: usize,
    (closed, vacuumed): (u64, u64),
    empty: u64,
    writes: &[Duration],
) {
    let per = |bytes: u64| bytes as f64 / turns as f64;
    println!(
        "  {label}: {:>9} B, {:>7.0} B/turn ({:>7.0} net of the empty file); after VACUUM \
         {:>9} B, {:>7.0} B/turn ({:>7.0} net); write µs/turn: mean {:>5.0}, p50 {:>5.0}, \
         p95 {:>5.0}",
        closed,
        per(closed),
        per(closed.saturating_sub(empty)),
        vacuumed,
        per(vacuumed),
        per(vacuumed.saturating_sub(empty)),
        per_turn_us(writes.iter().sum(), writes.len()),
        percentile(writes, 50).as_secs_f64() * 1e6,
        percentile(writes, 95).as_secs_f64() * 1e6,
    );
}

const RUNS: usize = 3;

/// Removes a database file and its WAL and shared-memory files, if any.
fn remove(path: &Path) -> Res<()> {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
    }
    Ok(())
}

/// The run with the smaller total time.
fn faster(a: Vec<Duration>, b: Vec<Duration>) -> Vec<Duration> {
    let total = |t: &[Duration]| t.iter().sum::<Duration>();
    if a.is_empty() || total(&b) < total(&a) {
        b
    } else {
        a
    }
}

fn write_old(path: &Path, turns: &[NewTurn]) -> Res<Vec<Duration>> {
    let mut conn = legacy_v8::create(path)?;
    let mut times = Vec::with_capacity(turns.len());
    for turn in turns {
        let started = Instant::now();
        legacy_v8::insert(&mut conn, std::slice::from_ref(turn))?;
        times.push(started.elapsed());
    }
    Ok(times)
}

fn write_new(path: &Path, turns: &[NewTurn]) -> Res<Vec<Duration>> {
    let mut store = Store::open(path)?;
    let mut times = Vec::with_capacity(turns.len());
    for turn in turns {
        let started = Instant::now();
        store.insert_turns(std::slice::from_ref(turn))?;
        times.push(started.elapsed());
    }
    Ok(times)
}

fn read_old(path: &Path, turns: &[NewTurn]) -> Res<Duration> {
    let conn = Connection::open(path)?;
    let started = Instant::now();
    let mut stmt = conn.prepare("SELECT request_json, reply_json FROM turns ORDER BY id")?;
    let read: Vec<(String, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let took = started.elapsed();
    check(turns, read.iter().map(|(q, a)| (q.as_str(), a.as_deref())))?;
    Ok(took)
}

/// Every session's turns through `session_turns`, in the order they were written.
fn read_new(path: &Path, turns: &[NewTurn]) -> Res<Duration> {
    let store = Store::open(path)?;
    let mut sessions: Vec<&str> = turns.iter().map(|t| t.session_id.as_str()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    let started = Instant::now();
    let mut rows = Vec::new();
    for session in sessions {
        rows.extend(store.session_turns(session)?);
    }
    let took = started.elapsed();
    rows.sort_by_key(|r| r.id);
    check(
        turns,
        rows.iter()
            .map(|r| (r.request_json.as_str(), r.reply_json.as_deref())),
    )?;
    Ok(took)
}

/// Every request and reply read back byte for byte, in order.
fn check<'a>(turns: &[NewTurn], read: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> Res<()> {
    let read: Vec<_> = read.collect();
    let same = read.len() == turns.len()
        && turns
            .iter()
            .zip(&read)
            .all(|(t, r)| (t.request_json.as_str(), t.reply_json.as_deref()) == *r);
    if same {
        Ok(())
    } else {
        Err("a request or reply did not read back byte for byte".into())
    }
}

/// The file's size once the last connection closed (WAL checkpointed), and after `VACUUM`.
fn sizes(path: &Path) -> Res<(u64, u64)> {
    let closed = std::fs::metadata(path)?.len();
    let conn = Connection::open(path)?;
    conn.execute_batch("VACUUM")?;
    drop(conn);
    Ok((closed, std::fs::metadata(path)?.len()))
}

fn empty_size(path: &Path, v8: bool) -> Res<u64> {
    if v8 {
        drop(legacy_v8::create(path)?);
    } else {
        drop(Store::open(path)?);
    }
    Ok(sizes(path)?.1)
}

fn per_turn_us(total: Duration, turns: usize) -> f64 {
    total.as_secs_f64() * 1e6 / turns.max(1) as f64
}

fn percentile(times: &[Duration], p: usize) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    let rank = (sorted.len() * p).div_ceil(100).saturating_sub(1);
    sorted.get(rank).copied().unwrap_or_default()
}

const TOOLS: &[&str] = &[
    "read",
    "write",
    "edit",
    "exec",
    "process",
    "web_search",
    "web_fetch",
    "browser",
    "canvas",
    "nodes",
    "cron",
    "message",
    "gateway",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "memory_search",
    "memory_get",
];

/// One OpenClaw conversation on an Anthropic model: 25 user messages, each answered after two
/// tool rounds, so 75 requests.
fn openclaw_turns(seed: u64) -> Vec<NewTurn> {
    let mut words = Words::new(seed);
    let system = json!([{"type": "text", "text": words.text(28 * 1024),
        "cache_control": {"type": "ephemeral"}}]);
    let tools: Vec<Value> = TOOLS
        .iter()
        .map(|name| {
            json!({"name": name, "description": words.text(420), "input_schema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": words.text(60)},
                    "command": {"type": "string", "description": words.text(60)},
                    "timeout": {"type": "number", "description": words.text(40)},
                },
                "required": ["path"],
            }})
        })
        .collect();
    let mut messages: Vec<Value> = Vec::new();
    let mut out = Vec::new();
    for _ in 0..25 {
        messages.push(json!({"role": "user", "content": [
            {"type": "text", "text": words.text(300)}]}));
        for round in 0..3 {
            let request = json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 8192,
                "system": system,
                "tools": tools,
                "messages": with_breakpoint(&messages),
                "stream": true,
            });
            let content = if round < 2 {
                let id = format!("toolu_{:016x}", words.below(1 << 40));
                let name = TOOLS[words.below(TOOLS.len())];
                json!([{"type": "text", "text": words.text(120)},
                    {"type": "tool_use", "id": id, "name": name,
                     "input": {"path": words.text(30), "command": words.text(150)}}])
            } else {
                json!([{"type": "text", "text": words.text(800)}])
            };
            let reply = json!({"id": format!("msg_{:016x}", words.below(1 << 40)),
                "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": content, "stop_reason": if round < 2 { "tool_use" } else { "end_turn" },
                "usage": {"input_tokens": 12, "output_tokens": 200,
                    "cache_read_input_tokens": 40_000, "cache_creation_input_tokens": 900}});
            messages.push(json!({"role": "assistant", "content": content}));
            if round < 2 {
                let id = content[1]["id"].clone();
                let size = 1536 + words.below(4608);
                messages.push(json!({"role": "user", "content": [{"type": "tool_result",
                    "tool_use_id": id, "content": words.text(size)}]}));
            }
            let mut turn = new_turn(
                "openclaw",
                request.to_string(),
                reply.to_string(),
                out.len() as i64,
            );
            turn.client_protocol = "anthropic".to_owned();
            turn.upstream_protocol = "anthropic".to_owned();
            turn.model = "claude-sonnet-4-5".to_owned();
            out.push(turn);
        }
    }
    out
}

/// The messages as sent: the prompt-cache breakpoint on the newest message's last block, so
/// that message's bytes change once it is no longer the newest.
fn with_breakpoint(messages: &[Value]) -> Vec<Value> {
    let mut sent = messages.to_vec();
    if let Some(block) = sent
        .last_mut()
        .and_then(|m| m["content"].as_array_mut())
        .and_then(|blocks| blocks.last_mut())
        .and_then(Value::as_object_mut)
    {
        block.insert("cache_control".to_owned(), json!({"type": "ephemeral"}));
    }
    sent
}
