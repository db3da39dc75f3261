//! One combination of the cache benchmark: the conversation straight to a fake provider in
//! the client's own protocol, then through a real `metaclaw` (memory and skills on) to a fresh
//! fake speaking the upstream protocol, each fake with its own, empty prompt cache.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use metaclaw_store::{Store, TurnUsageRow};
use serde_json::{Value, json};

use super::play::{self, Api, Call, Target};
use super::shapes;
use crate::bench::learning::http;
use crate::bench::procs::{self, Proxy, ProxySpec};
use crate::fake_upstream::{CacheUse, FakeOptions, FakeUpstream};

pub const UPSTREAM_KEY: &str = "sk-cache-bench-upstream";
pub const PROXY_KEY: &str = "mc-cache-bench-proxy";

/// Memory and skills on, injected into every main turn; nothing learned meanwhile, so the
/// fake's cache sees only the conversation.
pub const PROXY_CONFIG: &str = "skills:\n  auto_evolve: false\nmemory:\n  auto_extract: false\n";

/// What the user told MetaClaw earlier; the first is pinned, so every block carries memory.
const MEMORIES: &[(&str, bool)] = &[
    (
        "The user prefers cargo nextest over cargo test for running Rust tests.",
        true,
    ),
    (
        "The project is a Rust web service using axum and sqlx on PostgreSQL.",
        false,
    ),
    (
        "CI for the project runs on GitHub Actions and must pass clippy with warnings denied.",
        false,
    ),
    (
        "Commit messages use the imperative mood with a scope prefix such as tests: or api:.",
        false,
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Combo {
    pub client: Api,
    pub upstream: Api,
}

impl Combo {
    pub const ALL: [Combo; 4] = [
        Combo {
            client: Api::OpenAi,
            upstream: Api::OpenAi,
        },
        Combo {
            client: Api::OpenAi,
            upstream: Api::Anthropic,
        },
        Combo {
            client: Api::Anthropic,
            upstream: Api::Anthropic,
        },
        Combo {
            client: Api::Anthropic,
            upstream: Api::OpenAi,
        },
    ];

    /// The agent whose traffic the client plays.
    pub fn agent(self) -> &'static str {
        match self.client {
            Api::OpenAi => "OpenClaw",
            Api::Anthropic => "Claude Code",
        }
    }
}

/// The client's requests: OpenClaw's for an OpenAI client (asking for stream usage, as it
/// does), Claude Code's for an Anthropic one.
pub fn requests(client: Api, turns: usize) -> Vec<Value> {
    match client {
        Api::OpenAi => shapes::openclaw(turns)
            .into_iter()
            .map(|mut r| {
                r["stream_options"] = json!({"include_usage": true});
                r
            })
            .collect(),
        Api::Anthropic => shapes::claude_code(turns),
    }
}

pub struct Outcome {
    pub combo: Combo,
    pub direct: Vec<Call>,
    pub through: Vec<Call>,
    /// MetaClaw's own record of the calls made through it, oldest first.
    pub recorded: Vec<TurnUsageRow>,
    /// What the provider behind MetaClaw reported for each call, oldest first.
    pub upstream: Vec<CacheUse>,
}

/// A fake provider that reports prompt-cache usage, with an empty cache.
pub async fn caching_fake() -> Result<FakeUpstream> {
    Ok(FakeUpstream::start(FakeOptions {
        api_key: Some(UPSTREAM_KEY.into()),
        prefix_cache: true,
        ..FakeOptions::default()
    })
    .await?)
}

/// Starts `metaclaw` (the binary at `exe`) in front of `fake`, speaking `upstream` to it, with
/// the memories above.
pub async fn start_proxy(exe: &Path, fake: &FakeUpstream, upstream: Api) -> Result<Proxy> {
    let spec = ProxySpec {
        exe,
        upstream: fake.addr(),
        upstream_key: UPSTREAM_KEY,
        proxy_key: PROXY_KEY,
        extra_config: PROXY_CONFIG,
        env: &[],
    };
    let proxy = procs::start_proxy_to(&spec, upstream.label(), Duration::from_secs(60)).await?;
    let token = admin_token(&proxy)?;
    for (content, pinned) in MEMORIES {
        let body = json!({"kind": "preference", "content": content, "pinned": pinned});
        http::admin_post(proxy.addr, &token, "/api/memory", &body).await?;
    }
    Ok(proxy)
}

pub fn admin_token(proxy: &Proxy) -> Result<String> {
    let token = std::fs::read_to_string(proxy.home().join("run/admin_token"))
        .context("reading the admin token")?;
    Ok(token.trim().to_string())
}

/// The usage MetaClaw recorded for its newest `n` turns, oldest first, once the recorder
/// has written them.
pub async fn recorded(proxy: &Proxy, n: usize) -> Result<Vec<TurnUsageRow>> {
    let token = admin_token(proxy)?;
    http::admin_post(proxy.addr, &token, "/api/recorder/flush", &json!({})).await?;
    let store = Store::open_read_only(&proxy.home().join("metaclaw.db"))?;
    let mut rows = store.recent_usage(n)?;
    rows.reverse();
    if rows.len() != n {
        bail!("MetaClaw recorded {} turns, expected {n}", rows.len());
    }
    Ok(rows)
}

/// Plays one combination: direct, then through MetaClaw.
pub async fn run(exe: &Path, combo: Combo, turns: usize) -> Result<Outcome> {
    let requests = requests(combo.client, turns);
    let session = format!(
        "cache-bench-{}-{}",
        combo.client.label(),
        combo.upstream.label()
    );

    let direct_fake = caching_fake().await?;
    let direct = Target {
        addr: direct_fake.addr(),
        key: UPSTREAM_KEY.into(),
        session: session.clone(),
    };
    let direct_calls = play::play(&direct, combo.client, &requests).await?;
    direct_fake.shutdown().await;

    let fake = caching_fake().await?;
    let proxy = start_proxy(exe, &fake, combo.upstream).await?;
    let through = Target {
        addr: proxy.addr,
        key: PROXY_KEY.into(),
        session,
    };
    let through_calls = play::play(&through, combo.client, &requests).await?;
    let recorded = recorded(&proxy, requests.len()).await?;
    drop(proxy);
    let upstream = fake.cache_uses();
    fake.shutdown().await;
    Ok(Outcome {
        combo,
        direct: direct_calls,
        through: through_calls,
        recorded,
        upstream,
    })
}
