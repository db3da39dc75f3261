//! The injected block's budget split through the real binary: memory gets half of
//! `injection.token_budget` when a skill matched the turn and all of it when none did.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_wire::tokens::estimate_tokens;
use serde_json::{Value, json};

/// Large enough that a built-in skill (1.5–2.5 kB, about 400–650 estimated tokens) fits in
/// the half memory leaves it; small enough that the memories below overflow half of it.
const BUDGET: usize = 1200;
const UNITS: usize = 20;
const MEMORY_HEADING: &str = "## Relevant Long-Term Memory";
const SKILLS_HEADING: &str = "## Skills";
const SKILL: &str = "performance-profiling";
/// Matches the profiling skill and, through "quasar", every memory.
const WITH_SKILL: &str =
    "The quasar export is slow and uses too much CPU. How do I profile it to find the bottleneck?";
/// Matches no skill, and every memory through "quasar".
const MEMORY_ONLY: &str = "Where do the quasar shards go?";

struct Daemon {
    fake: FakeUpstream,
    _home: Home,
    port: u16,
    token: String,
}

impl Daemon {
    async fn start() -> Daemon {
        let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
        let port = free_port();
        // Extraction, evolution and the adaptive policy off: no background calls to the
        // upstream and a retrieval policy that stays as configured between the two turns.
        let home = Home::new(&format!(
            "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n\
             injection:\n  token_budget: {BUDGET}\n\
             skills:\n  enabled: true\n  auto_evolve: false\n\
             memory:\n  enabled: true\n  max_injected_units: {UNITS}\n  auto_extract: false\n  adaptive_policy: false\n",
            fake.base_url_openai()
        ));
        home.start_daemon().await;
        let token = home.admin_token();
        Daemon {
            fake,
            _home: home,
            port,
            token,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    async fn remember(&self, content: &str) {
        let r = reqwest::Client::new()
            .post(self.url("/api/memory"))
            .bearer_auth(&self.token)
            .json(&json!({"kind": "semantic", "content": content}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }

    /// The skills the engine would inject for `query`.
    async fn injected_skills(&self, query: &str) -> Vec<String> {
        let r: Value = reqwest::Client::new()
            .get(
                reqwest::Url::parse_with_params(&self.url("/api/skills/search"), [("q", query)])
                    .unwrap(),
            )
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r["injected"]
            .as_array()
            .unwrap_or_else(|| panic!("unexpected search answer: {r}"))
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    }

    /// Sends `text` in a new session and returns the block the upstream received.
    async fn block_for(&self, session: &str, text: &str) -> String {
        let r = reqwest::Client::new()
            .post(self.url("/v1/chat/completions"))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", session)
            .json(&json!({"model":"m","messages":[{"role":"user","content":text}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let sent = self
            .fake
            .requests()
            .into_iter()
            .rev()
            .find(|r| r.path.contains("/chat/completions"))
            .unwrap();
        let content = sent.body["messages"][0]["content"].as_str().unwrap();
        assert!(content.starts_with(text), "{content}");
        let start = content.find("<metaclaw-context>\n").unwrap() + "<metaclaw-context>\n".len();
        let end = content.rfind("\n</metaclaw-context>").unwrap();
        content[start..end].to_string()
    }
}

/// The memory section: the renderer's text, from its heading to the end of the block.
fn memory_section(block: &str) -> &str {
    let at = block
        .find(MEMORY_HEADING)
        .unwrap_or_else(|| panic!("no memory section: {block}"));
    &block[at..]
}

fn bullets(section: &str) -> usize {
    section.lines().filter(|l| l.starts_with("- ")).count()
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_gets_half_the_budget_beside_a_skill_and_all_of_it_alone() {
    let d = Daemon::start().await;
    for i in 0..UNITS {
        d.remember(&format!(
            "Quasar note {i}: the nightly quasar export for region r{i} writes its parquet \
             shards to bucket q{i}-archive and pages the data team on failure."
        ))
        .await;
    }
    // The premise: the first question matches the profiling skill, the second none.
    assert!(
        d.injected_skills(WITH_SKILL)
            .await
            .contains(&SKILL.to_string()),
        "{SKILL} should match: {:?}",
        d.injected_skills(WITH_SKILL).await
    );
    assert_eq!(d.injected_skills(MEMORY_ONLY).await, Vec::<String>::new());

    // (a) A skill matched: memory is held to half the budget and the skill fills the rest.
    let a = d.block_for("budget-a", WITH_SKILL).await;
    assert!(a.starts_with(SKILLS_HEADING), "{a}");
    assert!(a.contains(&format!("### {SKILL}\n")), "{a}");
    let mem_a = memory_section(&a);
    let tokens_a = estimate_tokens(mem_a);
    // The renderer charges each piece rounded up and the section's own estimate is of the
    // whole text, so no rounding margin is needed: the section is exactly what it measured.
    assert!(
        tokens_a <= BUDGET / 2,
        "memory beside a skill used {tokens_a} of {}",
        BUDGET / 2
    );
    // Each skill is charged one token for the blank line before it, which covers the blank
    // line joining the two parts, so the whole block stays within the budget too.
    assert!(estimate_tokens(&a) <= BUDGET, "{}", estimate_tokens(&a));
    assert!(bullets(mem_a) >= 1 && bullets(mem_a) < UNITS, "{mem_a}");

    // (b) No skill matched: memory alone may use the whole budget, and needs more than half.
    let b = d.block_for("budget-b", MEMORY_ONLY).await;
    assert!(!b.contains(SKILLS_HEADING), "{b}");
    assert!(b.starts_with(MEMORY_HEADING), "{b}");
    let tokens_b = estimate_tokens(&b);
    assert!(tokens_b > BUDGET / 2, "memory alone used only {tokens_b}");
    assert!(tokens_b <= BUDGET, "{tokens_b}");
    assert!(tokens_b > tokens_a, "{tokens_b} <= {tokens_a}");
    assert_eq!(
        bullets(&b),
        UNITS,
        "every memory fits in the whole budget: {b}"
    );
    assert!(bullets(&b) > bullets(mem_a));
}
