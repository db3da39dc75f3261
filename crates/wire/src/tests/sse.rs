use crate::sse::{SseDecoder, SseEvent, encode};

fn ev(event: Option<&str>, data: &str) -> SseEvent {
    SseEvent {
        event: event.map(str::to_owned),
        data: data.to_owned(),
    }
}

#[test]
fn decodes_line_endings_comments_and_multiline() {
    let mut d = SseDecoder::new();
    let input = b": keep-alive\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\ndata: x\rdata: y\r\rid: 7\nretry: 10\nfield\ndata\n\n";
    let out = d.push(input);
    assert_eq!(
        out,
        vec![ev(Some("a"), "one\ntwo"), ev(None, "x\ny"), ev(None, "")]
    );
    assert_eq!(d.finish(), None);
}

#[test]
fn splits_anywhere_even_inside_utf8() {
    let input = "event: é\ndata: 日本語 ✓\r\n\r\ndata: [DONE]\n\n".as_bytes();
    for cut in 0..input.len() {
        let mut d = SseDecoder::new();
        let mut out = d.push(&input[..cut]);
        out.extend(d.push(&input[cut..]));
        assert_eq!(
            out,
            vec![ev(Some("é"), "日本語 ✓"), ev(None, "[DONE]")],
            "cut at {cut}"
        );
    }
}

#[test]
fn cr_at_chunk_end_then_lf() {
    let mut d = SseDecoder::new();
    assert!(d.push(b"data: a\r").is_empty());
    assert!(d.push(b"\n").is_empty());
    assert_eq!(d.push(b"\r"), vec![ev(None, "a")]);
    assert!(d.push(b"\ndata: b\n\n") == vec![ev(None, "b")]);
}

#[test]
fn finish_flushes_trailing_event() {
    let mut d = SseDecoder::new();
    assert!(
        d.push(b"event: message_stop\ndata: {\"type\":\"message_stop\"}")
            .is_empty()
    );
    assert_eq!(
        d.finish(),
        Some(ev(Some("message_stop"), "{\"type\":\"message_stop\"}"))
    );
    assert_eq!(d.finish(), None);
    let mut d = SseDecoder::new();
    assert!(d.push(b"data: x\n").is_empty());
    assert_eq!(d.finish(), Some(ev(None, "x")));
}

#[test]
fn skips_bom_and_event_without_data() {
    let mut d = SseDecoder::new();
    let out = d.push("\u{feff}data: a\n\nevent: lonely\n\ndata: b\n\n".as_bytes());
    assert_eq!(out, vec![ev(None, "a"), ev(None, "b")]);
}

#[test]
fn encodes() {
    assert_eq!(
        &encode(Some("ping"), "{}")[..],
        b"event: ping\ndata: {}\n\n"
    );
    assert_eq!(
        &encode(None, "a\nb\r\nc")[..],
        b"data: a\ndata: b\ndata: c\n\n"
    );
    assert_eq!(&encode(None, "")[..], b"data: \n\n");
    let mut d = SseDecoder::new();
    assert_eq!(
        d.push(&encode(Some("x"), " lead\n\ntrail ")),
        vec![ev(Some("x"), " lead\n\ntrail ")]
    );
}
