#![no_main]
//! Arbitrary bytes, split at a data-chosen point: the decoder must not panic, and
//! splitting must not change the events.

use libfuzzer_sys::fuzz_target;
use metaclaw_wire::sse::SseDecoder;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let cut = usize::from(cut).min(body.len());
    let mut whole = SseDecoder::new();
    let mut expected = whole.push(body);
    expected.extend(whole.finish());

    let mut split = SseDecoder::new();
    let mut got = split.push(&body[..cut]);
    got.extend(split.push(&body[cut..]));
    got.extend(split.finish());
    assert_eq!(expected, got);

    let _ = metaclaw_wire::assemble::assemble_openai_sse(&[bytes_of(body)]);
    let _ = metaclaw_wire::assemble::assemble_anthropic_sse(&[bytes_of(body)]);
});

fn bytes_of(b: &[u8]) -> bytes::Bytes {
    bytes::Bytes::copy_from_slice(b)
}
