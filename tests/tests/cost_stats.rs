//! What a conversation cost, through the `metaclaw` binary: `/api/stats`, `status --json` and
//! the text status add up the provider's figures recorded with each turn, price them with
//! the model's price, and estimate the prompt cache's share without MetaClaw's blocks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use metaclaw_e2e::bench::cache::play::{self, Api, Target};
use metaclaw_e2e::bench::cache::run::{self, PROXY_KEY};
use metaclaw_e2e::bench::learning::http;
use serde_json::Value;

/// `claude-sonnet-4-5` in the built-in list, US dollars per million tokens.
const INPUT: f64 = 3.00;
const OUTPUT: f64 = 15.00;
const CACHE_READ: f64 = 0.30;
const CACHE_WRITE: f64 = 3.75;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_and_status_add_up_the_recorded_figures_and_price_them() {
    let exe = common::daemon::bin();
    let fake = run::caching_fake().await.unwrap();
    let proxy = run::start_proxy(&exe, &fake, Api::Anthropic).await.unwrap();
    let through = Target {
        addr: proxy.addr,
        key: PROXY_KEY.into(),
        session: "cost".into(),
    };
    let requests = run::requests(Api::Anthropic, 3);
    play::play(&through, Api::Anthropic, &requests)
        .await
        .unwrap();
    let rows = run::recorded(&proxy, requests.len()).await.unwrap();
    let up = fake.cache_uses();
    assert_eq!(up.len(), rows.len());

    let token = run::admin_token(&proxy).unwrap();
    let stats = http::admin(proxy.addr, &token, "/api/stats?hours=24")
        .await
        .unwrap();
    let n = |v: &Value| v.as_u64().unwrap();
    let (prompt, read, write): (u64, u64, u64) = up.iter().fold((0, 0, 0), |a, u| {
        (a.0 + u.prompt, a.1 + u.read, a.2 + u.write)
    });
    let output: u64 = rows.iter().map(|r| r.output_tokens.unwrap()).sum();
    let injected: u64 = rows.iter().map(|r| r.injected_tokens.unwrap()).sum();
    let block: u64 = rows.iter().map(|r| r.block_tokens.unwrap()).sum();
    assert_eq!(n(&stats["turns"]), rows.len() as u64);
    assert_eq!(n(&stats["input_tokens"]), prompt);
    assert_eq!(n(&stats["output_tokens"]), output);
    assert_eq!(n(&stats["cache_read_tokens"]), read);
    assert_eq!(n(&stats["cache_write_tokens"]), write);
    assert_eq!(n(&stats["injected_tokens"]), injected);
    assert!(injected > block && block > 0, "{injected} {block}");
    let share = stats["cache_read_share"].as_f64().unwrap();
    assert!(close(share, read as f64 / prompt as f64), "{share}");
    let without = stats["cache_read_share_without_metaclaw"].as_f64().unwrap();
    let expected = (read - (injected - block)) as f64 / (prompt - injected) as f64;
    assert!(close(without, expected), "{without} vs {expected}");

    // Priced from the built-in list: cache reads and writes at their own prices.
    assert_eq!(stats["models"][0]["model"], "claude-sonnet-4-5", "{stats}");
    assert_eq!(stats["models"][0]["price_source"], "built_in");
    let per = |tokens: u64, usd: f64| tokens as f64 * usd / 1e6;
    let cost = per(prompt - read - write, INPUT)
        + per(read, CACHE_READ)
        + per(write, CACHE_WRITE)
        + per(output, OUTPUT);
    let turns_cost = stats["turns_cost_usd"].as_f64().unwrap();
    assert!(close(turns_cost, cost), "{turns_cost} vs {cost}");
    let injected_cost = stats["injected_cost_usd"].as_f64().unwrap();
    assert!(
        close(injected_cost, per(injected, INPUT)),
        "{injected_cost}"
    );
    assert_eq!(stats["unpriced_models"], serde_json::json!([]));
    assert!(stats["learning"]["since_day"].as_str().unwrap().len() == 10);

    // Day by day: the same figures per UTC day, oldest first, today last.
    let series = http::admin(proxy.addr, &token, "/api/stats?hours=24&days=3")
        .await
        .unwrap();
    let daily = series["daily"].as_array().unwrap();
    assert_eq!(daily.len(), 3, "{series}");
    let days: Vec<&str> = daily.iter().map(|d| d["day"].as_str().unwrap()).collect();
    assert!(days.windows(2).all(|w| w[0] < w[1]), "{days:?}");
    let sum = |key: &str| daily.iter().map(|d| n(&d[key])).sum::<u64>();
    assert_eq!(sum("turns"), rows.len() as u64);
    assert_eq!(sum("injected_tokens"), injected);
    // A day that had every turn (all but a run across UTC midnight) has the window's share.
    if let Some(d) = daily.iter().find(|d| n(&d["turns"]) == rows.len() as u64) {
        assert_eq!(d["cache_read_share"], stats["cache_read_share"]);
        assert_eq!(
            d["cache_read_share_without_metaclaw"],
            stats["cache_read_share_without_metaclaw"]
        );
    }
    assert!(
        stats["daily"].as_array().unwrap().is_empty(),
        "only when asked"
    );

    // A window outside the limits is refused with a reason.
    let refused = http::admin(proxy.addr, &token, "/api/stats?hours=0").await;
    assert!(
        format!("{refused:?}").contains("hours must be between"),
        "{refused:?}"
    );
    let refused = http::admin(proxy.addr, &token, "/api/stats?days=93").await;
    assert!(
        format!("{refused:?}").contains("days must be between"),
        "{refused:?}"
    );

    // `status --json` carries the same 24-hour report; the text status spells it out.
    let status = |json: bool| {
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("status").env("METACLAW_HOME", proxy.home());
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let json: Value = serde_json::from_str(&status(true)).unwrap();
    assert_eq!(json["usage"]["input_tokens"], stats["input_tokens"]);
    assert_eq!(json["usage"]["injected_tokens"], stats["injected_tokens"]);
    let text = status(false);
    assert!(
        text.contains(&format!(
            "usage:      {} turns in the last 24 h: {prompt} tokens in, {output} out, $",
            rows.len()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{:.1}% of the prompt read from the cache",
            share * 100.0
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("added by MetaClaw: {injected} tokens, at most $")),
        "{text}"
    );
    drop(proxy);
    fake.shutdown().await;
}
