//! The learning effect, small: a few rules stated once (outright and as corrections), later
//! tasks of their kind worded differently, each in a new conversation, and unrelated tasks,
//! through the real binary and its SQLite database. The scripted model complies only when a
//! rule is in its prompt, and learns only from what MetaClaw's learning prompts show it.
//! `learning-bench` runs the full scenario; this guards the effect in CI.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use metaclaw_e2e::bench::learning::config::Setup;
use metaclaw_e2e::bench::learning::run::{self, Outcome, Target};
use metaclaw_e2e::bench::learning::scenario::{RULES, Rule, UNRELATED};
use metaclaw_e2e::bench::learning::scenario_zh;
use metaclaw_e2e::bench::procs::{self, ProxySpec};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};

const UPSTREAM_KEY: &str = "sk-learning-test";
/// Learning settles in a few seconds; the bound only ends a broken run.
const SETTLE: Duration = Duration::from_secs(60);

/// Rules of five kinds; two are met as corrections of an answer.
fn rules() -> Vec<Rule> {
    let pick = [
        "Celsius",
        "DD.MM.YYYY",
        "in French",
        "cargo nextest",
        "Markdown table",
        "ripgrep",
    ];
    let rules: Vec<Rule> = RULES
        .iter()
        .filter(|r| pick.contains(&r.marker))
        .copied()
        .collect();
    assert_eq!(rules.len(), pick.len());
    rules
}

async fn measure(setup: Setup) -> Outcome {
    measure_with(setup, &rules(), &UNRELATED[..10], false).await
}

/// `setup` on `rules`; `terse`: the learning model only restates each rule (no tags, no
/// kind of task), like a cheap extraction model.
async fn measure_with(setup: Setup, rules: &[Rule], unrelated: &[&str], terse: bool) -> Outcome {
    let fake = FakeUpstream::start(FakeOptions {
        api_key: Some(UPSTREAM_KEY.into()),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    run::script(&fake, rules);
    fake.terse_lessons(terse);
    let exe = common::daemon::bin();
    let spec = ProxySpec {
        exe: &exe,
        upstream: fake.addr(),
        upstream_key: UPSTREAM_KEY,
        proxy_key: common::daemon::PROXY_KEY,
        extra_config: setup.yaml(),
        env: &[],
    };
    let proxy = procs::start_proxy(&spec, Duration::from_secs(30))
        .await
        .unwrap();
    let token = std::fs::read_to_string(proxy.home().join("run/admin_token")).unwrap();
    let target = Target {
        addr: proxy.addr,
        proxy_key: common::daemon::PROXY_KEY.into(),
        admin_token: token.trim().to_string(),
    };
    let out = run::run(&fake, &target, setup, rules, unrelated, SETTLE)
        .await
        .unwrap();
    assert!(!out.timed_out, "learning did not settle: {out:?}");
    assert_eq!(out.unrelated, unrelated.len());
    out
}

/// Every later task follows its rule, and no unrelated prompt carries one that retrieval
/// picked for it.
fn assert_learned(out: &Outcome) {
    assert_eq!(out.tasks, rules().len() * 4, "{out:?}");
    assert_eq!(out.missed, Vec::<String>::new(), "{out:?}");
    assert_eq!(out.leaks, Vec::new(), "{out:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn remembered_rules_come_back_for_tasks_of_their_kind_only() {
    let out = measure(Setup::MemoryOnly).await;
    assert_eq!(
        out.memories,
        rules().len() as u64,
        "one preference per rule: {out:?}"
    );
    assert_learned(&out);
    // Six short rules fit the standing-rules profile: they stand in every prompt.
    assert_eq!(out.profiled, out.unrelated, "{out:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn evolved_rules_come_back_for_tasks_of_their_kind_only() {
    let out = measure(Setup::SkillsOnly).await;
    assert_eq!(
        out.skills,
        rules().len() as u64,
        "one skill per rule: {out:?}"
    );
    assert_learned(&out);
    // Six one-sentence rules fit `skills.standing_tokens`: they stand in every prompt.
    assert_eq!(out.profiled, out.unrelated, "{out:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_learning_no_rule_comes_back() {
    let out = measure(Setup::LearningOff).await;
    assert_eq!((out.memories, out.skills), (0, 0), "{out:?}");
    assert_eq!(out.complied.iter().sum::<usize>(), 0, "{out:?}");
    assert_eq!(out.leaked, 0, "{out:?}");
}

/// Chinese rules through a terse learner: the later tasks share no word with their rule, so
/// they come back only as standing rules, and two of them ("以后代码注释一律用英文写，不要用中文。",
/// 18 characters) were once refused as fragments.
fn rules_zh() -> Vec<Rule> {
    let pick = ["+08:00", "摄氏度", "用英文写", "uv pip install"];
    let rules: Vec<Rule> = scenario_zh::RULES
        .iter()
        .filter(|r| pick.contains(&r.marker))
        .copied()
        .collect();
    assert_eq!(
        rules.len(),
        pick.len(),
        "{:?}",
        rules.iter().map(|r| r.marker).collect::<Vec<_>>()
    );
    rules
}

#[tokio::test(flavor = "multi_thread")]
async fn chinese_rules_taught_to_a_terse_learner_stand_as_skills() {
    let rules = rules_zh();
    let out = measure_with(
        Setup::SkillsOnly,
        &rules,
        &scenario_zh::UNRELATED[..6],
        true,
    )
    .await;
    assert_eq!(
        out.skills,
        rules.len() as u64,
        "one skill per rule: {out:?}"
    );
    assert_eq!(out.tasks, rules.len() * 4, "{out:?}");
    assert_eq!(out.missed, Vec::<String>::new(), "{out:?}");
    assert_eq!(out.leaks, Vec::new(), "{out:?}");
    assert_eq!(out.profiled, out.unrelated, "{out:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn chinese_rules_taught_to_a_terse_learner_stand_in_memory() {
    let rules = rules_zh();
    let out = measure_with(
        Setup::MemoryOnly,
        &rules,
        &scenario_zh::UNRELATED[..6],
        true,
    )
    .await;
    assert_eq!(out.memories, rules.len() as u64, "{out:?}");
    assert_eq!(out.missed, Vec::<String>::new(), "{out:?}");
    assert_eq!(out.leaks, Vec::new(), "{out:?}");
    assert_eq!(out.profiled, out.unrelated, "{out:?}");
}
