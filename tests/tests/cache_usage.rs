//! Per-turn usage through the `metaclaw` binary, against a provider that reports prompt-cache
//! usage as a prefix cache does: every protocol combination records the provider's figures
//! exactly (cache reads, and cache writes even where the client's protocol has no field for
//! them), keeps every resent byte cached, injects a block of skills and memories, and a
//! client that did not ask for stream usage sees the stream it would have seen without
//! MetaClaw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use metaclaw_e2e::bench::cache::play::{self, Api, Target};
use metaclaw_e2e::bench::cache::run::{self, Combo, PROXY_KEY, UPSTREAM_KEY};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_combination_records_the_providers_cache_figures_and_keeps_the_prefix_cached() {
    let exe = common::daemon::bin();
    for combo in Combo::ALL {
        let o = run::run(&exe, combo, 2).await.unwrap();
        let what = format!("{} → {}", combo.client.label(), combo.upstream.label());
        assert_eq!(o.recorded.len(), o.through.len(), "{what}");
        assert_eq!(o.upstream.len(), o.through.len(), "{what}");
        for (i, ((row, up), seen)) in o
            .recorded
            .iter()
            .zip(&o.upstream)
            .zip(&o.through)
            .enumerate()
        {
            // Exactly what the provider reported, in the recorded convention.
            assert_eq!(row.input_tokens, Some(up.prompt), "{what} call {i}");
            assert_eq!(row.cache_read_tokens, Some(up.read), "{what} call {i}");
            let write = (combo.upstream == Api::Anthropic).then_some(up.write);
            assert_eq!(row.cache_write_tokens, write, "{what} call {i}");
            assert!(row.output_tokens.is_some_and(|n| n > 0), "{what} call {i}");
            // The client sees the same prompt and cache reads in its own protocol.
            assert_eq!(seen.prompt, Some(up.prompt), "{what} call {i}");
            assert_eq!(seen.read, up.read, "{what} call {i}");
            // The block was injected: skills and memories, counted.
            assert!(row.block_tokens.is_some_and(|n| n > 0), "{what} call {i}");
            assert!(row.injected_tokens >= row.block_tokens, "{what} call {i}");
            assert!(!row.injected_skills.is_empty(), "{what} call {i}");
            assert!(!row.injected_memories.is_empty(), "{what} call {i}");
        }
        // Every byte resent from the previous call is read from the cache.
        for (i, pair) in o.through.windows(2).enumerate() {
            assert_eq!(
                pair[1].read,
                pair[0].prompt.unwrap(),
                "{what} call {}",
                i + 1
            );
        }
        // A second user turn brings a new block with it, on top of the first one resent.
        let last = o.recorded.last().unwrap();
        assert!(last.injected_tokens > last.block_tokens, "{what}");
    }
}

/// An OpenClaw-shaped first request that does not ask for stream usage.
fn without_usage_request() -> Value {
    let mut r = run::requests(Api::OpenAi, 1).remove(0);
    r.as_object_mut().unwrap().remove("stream_options");
    assert_eq!(r["stream"], true);
    r
}

/// The fake's `created` is the clock's second; everything else in its stream is fixed.
fn without_created(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut out = String::new();
    let mut rest = text.as_ref();
    while let Some(at) = rest.find("\"created\":") {
        let (head, tail) = rest.split_at(at + "\"created\":".len());
        out.push_str(head);
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_did_not_ask_for_usage_sees_its_stream_unchanged_and_the_turn_has_tokens() {
    let exe = common::daemon::bin();
    let request = without_usage_request();

    let direct_fake = run::caching_fake().await.unwrap();
    let direct = Target {
        addr: direct_fake.addr(),
        key: UPSTREAM_KEY.into(),
        session: "s".into(),
    };
    let direct_seen = play::play(&direct, Api::OpenAi, std::slice::from_ref(&request))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(
        direct_seen.prompt, None,
        "the provider sent no usage unasked"
    );

    for upstream in [Api::OpenAi, Api::Anthropic] {
        let fake = run::caching_fake().await.unwrap();
        let proxy = run::start_proxy(&exe, &fake, upstream).await.unwrap();
        let through = Target {
            addr: proxy.addr,
            key: PROXY_KEY.into(),
            session: "s".into(),
        };
        let seen = play::play(&through, Api::OpenAi, std::slice::from_ref(&request))
            .await
            .unwrap()
            .remove(0);
        let text = String::from_utf8_lossy(&seen.body).into_owned();
        assert!(!text.contains("usage"), "{text}");
        assert_eq!(seen.prompt, None);
        if upstream == Api::OpenAi {
            // MetaClaw asked for usage, then gave the client the stream the provider sends
            // when not asked: byte for byte (the block changes only the echoed reply text,
            // so the comparison is with a direct request carrying the same block).
            let forwarded = fake.requests().pop().unwrap();
            assert_eq!(
                forwarded.body["stream_options"],
                json!({"include_usage": true})
            );
            let mut asked = forwarded.body.clone();
            asked.as_object_mut().unwrap().remove("stream_options");
            let control = run::caching_fake().await.unwrap();
            let target = Target {
                addr: control.addr(),
                key: UPSTREAM_KEY.into(),
                session: "s".into(),
            };
            let unasked = play::play(&target, Api::OpenAi, &[asked])
                .await
                .unwrap()
                .remove(0);
            assert_eq!(without_created(&seen.body), without_created(&unasked.body));
            control.shutdown().await;
        }
        let row = run::recorded(&proxy, 1).await.unwrap().remove(0);
        let up = fake.cache_uses()[0];
        assert_eq!(row.input_tokens, Some(up.prompt), "{upstream:?}");
        assert!(up.prompt > 0);
        assert_eq!(row.cache_read_tokens, Some(0), "{upstream:?}");
        assert!(row.output_tokens.is_some_and(|n| n > 0), "{upstream:?}");
        drop(proxy);
        fake.shutdown().await;
    }
    direct_fake.shutdown().await;
}
