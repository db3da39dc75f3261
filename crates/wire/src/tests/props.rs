use super::assemble::{anthropic_sse, openai_sse};
use crate::anthropic::{self, MessagesRequest};
use crate::assemble::{assemble_anthropic_sse, assemble_openai_sse};
use crate::openai::{self, ChatRequest, MessageContent};
use crate::sse::{SseDecoder, SseEvent, encode};
use crate::translate::{anthropic_request_to_openai, openai_request_to_anthropic};
use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e9f64..1e9).prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Unknown fields: keys that no typed field uses.
fn arb_extra() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("x_[a-z]{1,6}", arb_json(), 0..3)
        .prop_map(|m| m.into_iter().collect())
}

fn with_extra(mut v: Value, extra: Map<String, Value>) -> Value {
    if let Value::Object(m) = &mut v {
        m.extend(extra);
    }
    v
}

fn arb_openai_part() -> impl Strategy<Value = Value> {
    prop_oneof![
        (".{0,20}", arb_extra()).prop_map(|(t, e)| with_extra(json!({"type": "text", "text": t}), e)),
        ("[a-z]{1,10}", arb_extra()).prop_map(|(u, e)| with_extra(
            json!({"type": "image_url", "image_url": {"url": format!("https://x/{u}.png"), "detail": "low"}}),
            e
        )),
        arb_extra().prop_map(|e| with_extra(json!({"type": "zz_unknown"}), e)),
    ]
}

fn arb_openai_content() -> impl Strategy<Value = Value> {
    prop_oneof![
        ".{0,30}".prop_map(Value::String),
        prop::collection::vec(arb_openai_part(), 0..4).prop_map(Value::Array),
    ]
}

fn arb_openai_message() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just("system"),
            Just("developer"),
            Just("user"),
            Just("assistant"),
            Just("tool"),
            Just("function"),
            Just("critic")
        ],
        prop::option::of(arb_openai_content()),
        prop::option::of(prop::collection::vec(
            ("[a-z_0-9]{0,8}", "[a-z]{1,6}", ".{0,20}"),
            0..3,
        )),
        prop::option::of("[a-z_0-9]{1,8}"),
        arb_extra(),
    )
        .prop_map(|(role, content, calls, call_id, extra)| {
            let mut m = json!({"role": role});
            if let Some(c) = content {
                m["content"] = c;
            }
            if let Some(calls) = calls {
                m["tool_calls"] = calls
                    .into_iter()
                    .map(|(id, name, args)| {
                        json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
                    })
                    .collect();
            }
            if let Some(id) = call_id {
                m["tool_call_id"] = json!(id);
            }
            with_extra(m, extra)
        })
}

fn arb_openai_request() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(arb_openai_message(), 0..6),
        prop::option::of(any::<bool>()),
        prop::option::of(0u32..100_000),
        prop::option::of(0u32..100_000),
        prop::option::of(0.0f64..2.0),
        prop::option::of(prop_oneof![
            ".{0,5}".prop_map(Value::String),
            prop::collection::vec(".{0,5}", 0..3).prop_map(|v| json!(v)),
        ]),
        prop::option::of(prop_oneof![Just(json!("auto")), Just(json!("required"))]),
        arb_extra(),
    )
        .prop_map(|(messages, stream, mt, mct, temp, stop, tc, extra)| {
            let mut r = json!({"model": "m", "messages": messages});
            if let Some(s) = stream {
                r["stream"] = json!(s);
                r["stream_options"] = json!({"include_usage": s});
            }
            if let Some(v) = mt {
                r["max_tokens"] = json!(v);
            }
            if let Some(v) = mct {
                r["max_completion_tokens"] = json!(v);
            }
            if let Some(v) = temp {
                r["temperature"] = json!(v);
            }
            if let Some(v) = stop {
                r["stop"] = v;
            }
            if let Some(v) = tc {
                r["tool_choice"] = v;
                r["tools"] = json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]);
            }
            with_extra(r, extra)
        })
}

fn arb_anthropic_block() -> impl Strategy<Value = Value> {
    prop_oneof![
        (".{0,20}", arb_extra()).prop_map(|(t, e)| with_extra(json!({"type": "text", "text": t}), e)),
        ("[A-Za-z0-9+/]{0,12}", arb_extra()).prop_map(|(d, e)| with_extra(
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": d}}),
            e
        )),
        ("[a-z0-9_]{1,8}", "[a-z]{1,6}", arb_extra()).prop_map(|(id, n, e)| with_extra(
            json!({"type": "tool_use", "id": id, "name": n, "input": {"k": id}}),
            e
        )),
        ("[a-z0-9_]{1,8}", ".{0,10}", any::<bool>(), arb_extra()).prop_map(|(id, c, err, e)| {
            with_extra(
                json!({"type": "tool_result", "tool_use_id": id, "content": c, "is_error": err}),
                e,
            )
        }),
        (".{0,10}", arb_extra()).prop_map(|(t, e)| with_extra(
            json!({"type": "thinking", "thinking": t, "signature": "s"}),
            e
        )),
        arb_extra().prop_map(|e| with_extra(json!({"type": "zz_block", "payload": 1}), e)),
    ]
}

fn arb_anthropic_request() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(
            (
                prop_oneof![Just("user"), Just("assistant"), Just("system")],
                prop_oneof![
                    ".{0,20}".prop_map(Value::String),
                    prop::collection::vec(arb_anthropic_block(), 0..4).prop_map(Value::Array),
                ],
                arb_extra(),
            )
                .prop_map(|(r, c, e)| with_extra(json!({"role": r, "content": c}), e)),
            0..6,
        ),
        prop::option::of(prop_oneof![
            ".{0,20}".prop_map(Value::String),
            prop::collection::vec(
                (".{0,10}", arb_extra())
                    .prop_map(|(t, e)| with_extra(json!({"type": "text", "text": t}), e)),
                0..3
            )
            .prop_map(Value::Array),
        ]),
        prop::option::of(1u32..100_000),
        prop::option::of(".{0,20}"),
        arb_extra(),
    )
        .prop_map(|(messages, system, max_tokens, user, extra)| {
            let mut r = json!({"model": "claude", "messages": messages});
            if let Some(s) = system {
                r["system"] = s;
            }
            if let Some(m) = max_tokens {
                r["max_tokens"] = json!(m);
            }
            if let Some(u) = user {
                r["metadata"] = json!({"user_id": u});
            }
            with_extra(r, extra)
        })
}

/// A well-formed OpenAI conversation: user turns (sometimes two in a row), assistant turns
/// with optional tool calls, each answered by tool messages whose ids the client rewrote.
fn arb_conversation() -> impl Strategy<Value = Value> {
    let turn = (
        prop::collection::vec("[a-zA-Z0-9 .,!?é]{1,20}", 1..3),
        "[a-zA-Z0-9 .,]{0,20}",
        prop::collection::vec(("[a-z]{1,6}", any::<u8>()), 0..3),
        any::<bool>(),
    );
    (".{0,20}", prop::collection::vec(turn, 1..5)).prop_map(|(system, turns)| {
        let mut messages = Vec::new();
        if !system.is_empty() {
            messages.push(json!({"role": "system", "content": system}));
        }
        let mut n = 0;
        for (users, text, calls, rewrite) in turns {
            for u in users {
                messages.push(json!({"role": "user", "content": u}));
            }
            if text.is_empty() && calls.is_empty() {
                continue;
            }
            let calls: Vec<(String, String, u8)> = calls
                .into_iter()
                .map(|(name, arg)| {
                    n += 1;
                    (format!("call_{n}"), name, arg)
                })
                .collect();
            let mut a = json!({"role": "assistant", "content": text});
            if !calls.is_empty() {
                a["tool_calls"] = calls
                    .iter()
                    .map(|(id, name, arg)| json!({"id": id, "type": "function",
                        "function": {"name": name, "arguments": json!({"v": arg}).to_string()}}))
                    .collect();
            }
            messages.push(a);
            for (id, _, arg) in &calls {
                let sent = if rewrite { id.replace('_', "") } else { id.clone() };
                messages.push(json!({"role": "tool", "tool_call_id": sent, "content": format!("result {arg}")}));
            }
        }
        json!({"model": "m", "messages": messages})
    })
}

#[derive(Debug, PartialEq)]
enum Item {
    System(String),
    User(String),
    Assistant(String),
    Call(String, String, Value),
    Result(String, String),
}

/// What must survive translation, with the documented normalisations applied: system
/// messages are gathered at the front and tool results carry the original call id.
fn project(req: &ChatRequest, rewritten_ids: bool) -> Vec<Item> {
    let mut system = Vec::new();
    let mut items = Vec::new();
    let mut last_calls: Vec<String> = Vec::new();
    for m in &req.messages {
        let texts: Vec<String> = match &m.content {
            Some(MessageContent::Text(s)) => vec![s.clone()],
            Some(MessageContent::Parts(p)) => p
                .iter()
                .filter_map(|p| p.as_text().map(str::to_owned))
                .collect(),
            None => Vec::new(),
        };
        let texts = texts.into_iter().filter(|t| !t.is_empty());
        match m.role.as_str() {
            "system" => system.extend(texts),
            "user" => items.extend(texts.map(Item::User)),
            "assistant" => {
                items.extend(texts.map(Item::Assistant));
                last_calls.clear();
                for c in m.tool_calls.iter().flatten() {
                    last_calls.push(c.id.clone());
                    let args: Value = serde_json::from_str(&c.function.arguments).unwrap();
                    items.push(Item::Call(c.id.clone(), c.function.name.clone(), args));
                }
            }
            "tool" => {
                let sent = m.tool_call_id.clone().unwrap_or_default();
                let id = if rewritten_ids {
                    last_calls
                        .iter()
                        .find(|c| c.replace('_', "") == sent)
                        .cloned()
                        .unwrap_or(sent)
                } else {
                    sent
                };
                items.push(Item::Result(id, texts.collect::<Vec<_>>().join("\n")));
            }
            other => panic!("unexpected role {other}"),
        }
    }
    if !system.is_empty() {
        items.insert(0, Item::System(system.join("\n\n")));
    }
    items
}

fn sse_expected(data: &str) -> String {
    data.replace("\r\n", "\n").replace('\r', "\n")
}

fn split_at_cuts(bytes: &[u8], cuts: &[usize]) -> Vec<Bytes> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut prev = 0;
    for c in cuts {
        out.push(Bytes::copy_from_slice(&bytes[prev..c]));
        prev = c;
    }
    out.push(Bytes::copy_from_slice(&bytes[prev..]));
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn openai_request_round_trips(v in arb_openai_request()) {
        let req: ChatRequest = serde_json::from_value(v.clone()).unwrap();
        let bytes = serde_json::to_vec(&req).unwrap();
        let back: Value = serde_json::from_slice(&bytes).unwrap();
        prop_assert_eq!(&back, &v);
        let again = ChatRequest::from_slice(&bytes).unwrap();
        prop_assert_eq!(again, req);
    }

    #[test]
    fn anthropic_request_round_trips(v in arb_anthropic_request()) {
        let req: MessagesRequest = serde_json::from_value(v.clone()).unwrap();
        let bytes = serde_json::to_vec(&req).unwrap();
        let back: Value = serde_json::from_slice(&bytes).unwrap();
        prop_assert_eq!(&back, &v);
        let again = MessagesRequest::from_slice(&bytes).unwrap();
        prop_assert_eq!(again, req);
    }

    #[test]
    fn openai_anthropic_openai_preserves_conversation(v in arb_conversation()) {
        let req: ChatRequest = serde_json::from_value(v).unwrap();
        let expected = project(&req, true);
        let anth = openai_request_to_anthropic(req).unwrap();
        for pair in anth.messages.windows(2) {
            prop_assert_ne!(&pair[0].role, &pair[1].role);
        }
        let back = anthropic_request_to_openai(anth).unwrap();
        prop_assert_eq!(project(&back, false), expected);
    }

    #[test]
    fn translation_never_panics(o in arb_openai_request(), a in arb_anthropic_request()) {
        let o: ChatRequest = serde_json::from_value(o).unwrap();
        if let Ok(anth) = openai_request_to_anthropic(o) {
            prop_assert!(!anth.messages.is_empty());
            let _ = anthropic_request_to_openai(anth);
        }
        let a: MessagesRequest = serde_json::from_value(a).unwrap();
        if let Ok(oai) = anthropic_request_to_openai(a) {
            let _ = openai_request_to_anthropic(oai);
        }
    }

    #[test]
    fn sse_round_trips_with_any_split(
        events in prop::collection::vec((prop::option::of("[a-z_]{1,12}"), "(.|\n|\r){0,40}"), 0..6),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut wire = Vec::new();
        for (name, data) in &events {
            wire.extend_from_slice(&encode(name.as_deref(), data));
        }
        let mut d = SseDecoder::new();
        let mut got = Vec::new();
        for piece in split_at_cuts(&wire, &cuts) {
            got.extend(d.push(&piece));
        }
        got.extend(d.finish());
        let expected: Vec<SseEvent> = events
            .iter()
            .map(|(e, data)| SseEvent { event: e.clone(), data: sse_expected(data) })
            .collect();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn assemblers_ignore_how_bytes_are_split(
        texts in prop::collection::vec(".{0,12}", 1..6),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
    ) {
        let whole: String = texts.concat();
        let chunks: Vec<Value> = texts.iter().map(|t| json!({"id": "c", "model": "m", "created": 1,
            "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]})).collect();
        let wire: Vec<u8> = openai_sse(&chunks, true).concat();
        let out = assemble_openai_sse(&split_at_cuts(&wire, &cuts)).unwrap();
        prop_assert_eq!(out["choices"][0]["message"]["content"].as_str(), Some(whole.as_str()));

        let mut events = vec![
            json!({"type": "message_start", "message": {"id": "m", "model": "c", "usage": {"input_tokens": 1, "output_tokens": 0}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ];
        events.extend(texts.iter().map(|t| json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}})));
        events.push(json!({"type": "content_block_stop", "index": 0}));
        events.push(json!({"type": "message_stop"}));
        let wire: Vec<u8> = anthropic_sse(&events).concat();
        let out = assemble_anthropic_sse(&split_at_cuts(&wire, &cuts)).unwrap();
        prop_assert_eq!(out["content"][0]["text"].as_str(), Some(whole.as_str()));
        prop_assert!(out.get("incomplete").is_none());
    }

    #[test]
    fn parsers_never_panic_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256), cut in any::<usize>()) {
        let _ = ChatRequest::from_slice(&bytes);
        let _ = MessagesRequest::from_slice(&bytes);
        let _ = serde_json::from_slice::<openai::ChatChunk>(&bytes);
        let _ = serde_json::from_slice::<anthropic::StreamEvent>(&bytes);
        let mut d = SseDecoder::new();
        let cut = cut % (bytes.len() + 1);
        let _ = d.push(&bytes[..cut]);
        let _ = d.push(&bytes[cut..]);
        let _ = d.finish();
        let _ = assemble_openai_sse(&[Bytes::from(bytes.clone())]);
        let _ = assemble_anthropic_sse(&[Bytes::from(bytes)]);
    }

    #[test]
    fn parsers_never_panic_on_json(v in arb_json()) {
        let _ = serde_json::from_value::<ChatRequest>(v.clone());
        let _ = serde_json::from_value::<MessagesRequest>(v.clone());
        let _ = serde_json::from_value::<anthropic::StreamEvent>(v);
    }
}
