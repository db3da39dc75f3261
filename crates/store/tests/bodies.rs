//! Requests and replies in the compact layout (schema v9): read back byte for byte whatever
//! their form, and a clear error — never a panic or a different text — when damaged.
#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_store::{NewTurn, Store, StoreError};

mod common;

fn turn(session: &str, request: &str, reply: Option<&str>) -> NewTurn {
    let mut t = common::turn(session, "main", 1);
    t.request_json = request.to_owned();
    t.reply_json = reply.map(str::to_owned);
    t
}

fn long(words: &str, n: usize) -> String {
    words.repeat(n)
}

/// Requests and replies of every form the proxy might record.
fn bodies() -> Vec<(String, Option<String>)> {
    let system = long("You are a careful assistant. ", 40);
    let question = long("Why does the build fail on CI? ", 12);
    vec![
        // Compact OpenAI chat, as most agents send it.
        (
            format!(
                r#"{{"model":"m","messages":[{{"role":"system","content":"{system}"}},{{"role":"user","content":"{question}"}}],"stream":true}}"#
            ),
            Some(format!(
                r#"{{"choices":[{{"message":{{"role":"assistant","content":"{}"}}}}]}}"#,
                long("Because the cache is stale. ", 10)
            )),
        ),
        // Pretty-printed with CRLF and tabs, keys reordered, numbers and escapes in their
        // original spelling, text outside the Basic Multilingual Plane.
        (
            format!(
                "{{\r\n\t\"temperature\" : 1E+2,\r\n\t\"top_p\": -0.0 ,\r\n\t\"messages\" :\r\n\t[\r\n\t\t\
                 {{ \"content\" : \"{question} \\ud83d\\ude00 😀 \\\"quoted\\\" \\\\ \\/ \\u0000\", \
                 \"role\" : \"user\" }}\r\n\t]\r\n}}\r\n"
            ),
            Some("data: {\"not\": \"json\"}\n\ndata: [DONE]\n\n".repeat(20)),
        ),
        // Anthropic: system blocks, tools, content blocks with a prompt-cache marker.
        (
            format!(
                r#"{{"system":[{{"type":"text","text":"{system}","cache_control":{{"type":"ephemeral"}}}}],"tools":[{{"name":"read","description":"{}","input_schema":{{"type":"object"}}}}],"messages":[{{"role":"user","content":[{{"type":"text","text":"{question}","cache_control":{{"type":"ephemeral"}}}}]}}],"max_tokens":1024}}"#,
                long("Reads a file. ", 20)
            ),
            Some(format!(
                r#"{{"content":[{{"type":"tool_use","id":"t1","name":"read","input":{{"path":"{}"}}}}]}}"#,
                long("src/", 30)
            )),
        ),
        // A duplicated key, a truncated body, messages that are not an array, a top-level array.
        (
            format!(r#"{{"messages":[{{"content":"{question}"}}],"messages":[]}}"#),
            None,
        ),
        (
            format!(r#"{{"messages":[{{"content":"{question}"}}"#),
            Some(String::new()),
        ),
        (
            format!(r#"{{"messages":{{"content":"{question}"}}}}"#),
            Some("{}".to_owned()),
        ),
        (format!(r#"[{{"messages":["{question}"]}}]"#), None),
        // Tiny and empty bodies.
        (String::new(), None),
        ("{}".to_owned(), Some("{}".to_owned())),
        ("   \n".to_owned(), Some("plain text".to_owned())),
        // A megabyte of history.
        (
            format!(
                r#"{{"messages":[{}]}}"#,
                (0..400)
                    .map(|i| format!(
                        r#"{{"role":"user","content":"{i} {}"}}"#,
                        long("word ", 500)
                    ))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Some(long("x", 5000)),
        ),
    ]
}

#[test]
fn bodies_of_any_form_read_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let mut store = Store::open(&path).unwrap();
    let bodies = bodies();
    // Twice, in two sessions: the second copy is all references to parts stored once.
    for session in ["a", "b"] {
        let turns: Vec<NewTurn> = bodies
            .iter()
            .map(|(q, a)| turn(session, q, a.as_deref()))
            .collect();
        store.insert_turns(&turns).unwrap();
    }
    drop(store);
    let store = Store::open_read_only(&path).unwrap();
    for session in ["a", "b"] {
        let rows = store.session_turns(session).unwrap();
        assert_eq!(rows.len(), bodies.len());
        for (row, (request, reply)) in rows.iter().zip(&bodies) {
            assert_eq!(&row.request_json, request);
            assert_eq!(&row.reply_json, reply);
        }
    }
    store.integrity_check().unwrap();
}

/// A store holding one turn whose request has parts, and the id of its first part.
fn one_turn(dir: &std::path::Path) -> (Store, i64) {
    let mut store = Store::open(&dir.join("metaclaw.db")).unwrap();
    let (request, reply) = bodies().swap_remove(0);
    store
        .insert_turns(&[turn("s", &request, reply.as_deref())])
        .unwrap();
    let first = store
        .connection()
        .query_row("SELECT MIN(id) FROM body_parts", [], |r| r.get(0))
        .unwrap();
    (store, first)
}

fn read_error(store: &Store) -> String {
    match store.session_turns("s") {
        Err(e @ StoreError::BadBody { .. }) => e.to_string(),
        other => panic!("expected a damaged body, got {other:?}"),
    }
}

#[test]
fn damaged_parts_and_bodies_are_errors_naming_the_turn() {
    let damage = [
        // Not a stored body at all.
        "UPDATE body_part_data SET data = x'01ffee' WHERE id = ?1",
        // A valid body of another text: caught by the part's hash.
        "UPDATE body_part_data SET data = x'00414243' WHERE id = ?1",
        // An unknown format.
        "UPDATE body_part_data SET data = x'09' WHERE id = ?1",
        // Gone.
        "DELETE FROM body_part_data WHERE id = ?1",
    ];
    for sql in damage {
        let dir = tempfile::tempdir().unwrap();
        let (store, part) = one_turn(dir.path());
        store.connection().execute(sql, [part]).unwrap();
        let error = read_error(&store);
        assert!(
            error.contains("turn 1") && error.contains(&format!("part {part}")),
            "{error}"
        );
        assert!(store.integrity_check().is_err(), "{sql}");
    }

    let dir = tempfile::tempdir().unwrap();
    let (store, _) = one_turn(dir.path());
    store
        .connection()
        .execute("UPDATE turns SET request_body = x'0205' WHERE id = 1", [])
        .unwrap();
    assert!(read_error(&store).contains("turn 1"));
}
