use super::*;

fn relay(chunks: &[&str]) -> (String, Option<TokenUsage>) {
    let mut w = Withhold::new();
    let mut out = VecDeque::new();
    for c in chunks {
        w.push(c.as_bytes(), &mut out);
    }
    w.finish(&mut out);
    let text = out
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    (text, w.usage())
}

#[test]
fn the_usage_chunk_and_null_usage_members_are_cut_and_the_rest_is_unchanged() {
    let upstream = [
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi \\\"usage\\\": x\"}}],\"usage\":null}\n\n",
        "data: {\"id\":\"c\",\"usage\": null ,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":2,\"total_tokens\":52,\"prompt_tokens_details\":{\"cached_tokens\":40}}}\n\n",
        "data: [DONE]\n\n",
    ];
    let (seen, usage) = relay(&upstream);
    assert_eq!(
        seen,
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi \\\"usage\\\": x\"}}]}\n\n\
         data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
         data: [DONE]\n\n"
    );
    assert_eq!(
        usage,
        Some(TokenUsage {
            input_tokens: Some(50),
            output_tokens: Some(2),
            cache_read_tokens: Some(40),
            cache_write_tokens: None,
        })
    );
}

#[test]
fn events_split_anywhere_come_out_whole_and_crlf_is_kept() {
    let whole = "data: {\"usage\":null,\"choices\":[]}\r\n\r\ndata: {\"a\":1}\r\n\r\n";
    let mut pieces = Vec::new();
    for (i, c) in whole.char_indices() {
        pieces.push(&whole[i..i + c.len_utf8()]);
    }
    let (seen, usage) = relay(&pieces);
    assert_eq!(
        seen,
        "data: {\"choices\":[]}\r\n\r\ndata: {\"a\":1}\r\n\r\n"
    );
    assert_eq!(usage, None);
}

#[test]
fn usage_on_a_content_chunk_is_recorded_and_cut_from_it() {
    let (seen, usage) = relay(&[
        "data: {\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1},\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    ]);
    assert_eq!(
        seen,
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    );
    assert_eq!(usage.and_then(|u| u.input_tokens), Some(3));
}

#[test]
fn members_are_cut_only_at_the_top_level() {
    let cut = remove_member(r#"{"a":{"usage":1},"usage":[1,{"b":"}"}]}"#, "usage").unwrap();
    assert_eq!(cut.rest, r#"{"a":{"usage":1}}"#);
    assert_eq!(cut.value, r#"[1,{"b":"}"}]"#);
    let only = remove_member(r#"{ "usage" : null }"#, "usage").unwrap();
    assert_eq!(only.rest, "{ }");
    assert!(remove_member(r#"{"a":"usage"}"#, "usage").is_none());
    assert!(remove_member(r#"["usage"]"#, "usage").is_none());
}
