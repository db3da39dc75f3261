#![no_main]
//! Parsing arbitrary bytes never panics; whatever parses re-serializes to JSON that parses
//! and serializes to the same JSON again, and translates without panicking. (Typed equality
//! is too strict: with duplicate keys a known block falls back to `Other` on the first parse
//! only, since `Other` keeps just the last value of the key.)

use libfuzzer_sys::fuzz_target;
use metaclaw_wire::{anthropic::MessagesRequest, text, translate};

fuzz_target!(|data: &[u8]| {
    let Ok(req) = MessagesRequest::from_slice(data) else {
        return;
    };
    let json = serde_json::to_value(&req).expect("serializes");
    let again = MessagesRequest::from_slice(json.to_string().as_bytes()).expect("re-parses");
    assert_eq!(json, serde_json::to_value(&again).expect("serializes"));
    let _ = text::newest_user_text_anthropic(&req);
    let _ = translate::anthropic_request_to_openai(req);
});
