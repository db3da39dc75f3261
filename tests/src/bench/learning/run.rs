//! One pass of the benchmark against a running proxy: every rule met once, learning waited
//! for, then every later task and every unrelated task in a conversation of its own.
//!
//! Compliance is read from the answers the agent gets. Leaks are read from what the model
//! received: an unrelated task's prompt holding any rule's marker.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{Value, json};

use super::config::Setup;
use super::http;
use super::scenario::Rule;
use crate::fake_upstream::{FakeUpstream, Task};

/// What the scripted model answers: with the rule's marker when it complies.
fn task(asks: &str, rule: &Rule) -> Task {
    Task {
        asks: asks.to_string(),
        needs: rule.marker.to_string(),
        right: format!("Done, following your rule ({}).", rule.marker),
        wrong: "Done.".to_string(),
    }
}

/// Registers every rule's tasks with the scripted model.
pub fn script(fake: &FakeUpstream, rules: &[Rule]) {
    fake.read_lessons(true);
    for rule in rules {
        for asks in rule.tasks.iter().chain(rule.corrects.iter()) {
            fake.add_task(task(asks, rule));
        }
    }
}

/// The proxy under test.
pub struct Target {
    pub addr: SocketAddr,
    pub proxy_key: String,
    pub admin_token: String,
}

#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Per rule: later tasks answered following it.
    pub complied: Vec<usize>,
    pub tasks: usize,
    pub unrelated: usize,
    /// Unrelated tasks whose prompt held some rule's marker outside the standing-rules
    /// profile: a rule retrieval picked for a task it does not apply to.
    pub leaked: usize,
    /// Unrelated tasks whose prompt held a rule in the standing-rules profile while it was
    /// whole, in every turn's prompt by design (informative). Past its budget the profile
    /// holds only what retrieval found, which counts as a leak.
    pub profiled: usize,
    /// Later tasks whose prompt held another rule's marker (informative).
    pub foreign: usize,
    /// Later tasks answered without following their rule.
    pub missed: Vec<String>,
    /// Each unrelated task that leaked, with the markers found in its prompt.
    pub leaks: Vec<(String, Vec<String>)>,
    /// Preferences stored and skills added by the time the later tasks ran.
    pub memories: u64,
    pub skills: u64,
    /// Learning had not settled when the wait ended.
    pub timed_out: bool,
}

impl Outcome {
    pub fn compliance(&self) -> f64 {
        self.complied.iter().sum::<usize>() as f64 / self.tasks.max(1) as f64
    }

    pub fn leak_rate(&self) -> f64 {
        self.leaked as f64 / self.unrelated.max(1) as f64
    }
}

pub async fn run(
    fake: &FakeUpstream,
    target: &Target,
    setup: Setup,
    rules: &[Rule],
    unrelated: &[&str],
    wait: Duration,
) -> Result<Outcome> {
    let (addr, key) = (target.addr, target.proxy_key.as_str());
    let before = counts(target).await?;
    for (i, rule) in rules.iter().enumerate() {
        let session = format!("rule-{i}");
        let mut messages = Vec::new();
        if let Some(request) = rule.corrects {
            messages.push(json!({"role": "user", "content": request}));
            let answer = http::chat(addr, key, &session, json!(messages), false).await?;
            messages.push(json!({"role": "assistant", "content": answer}));
        }
        messages.push(json!({"role": "user", "content": rule.statement}));
        http::chat(addr, key, &session, json!(messages), true).await?;
    }
    let (learned, timed_out) = settle(target, setup, rules.len() as u64, &before, wait).await?;

    let mut out = Outcome {
        memories: learned.preferences.saturating_sub(before.preferences),
        skills: learned.skills_added.saturating_sub(before.skills_added),
        timed_out,
        ..Outcome::default()
    };
    for (i, rule) in rules.iter().enumerate() {
        let mut complied = 0;
        for (j, t) in rule.tasks.iter().enumerate() {
            let (answer, prompt) = ask(fake, target, &format!("task-{i}-{j}"), t).await?;
            let followed = answer.contains(rule.marker);
            complied += usize::from(followed);
            if !followed {
                out.missed.push(t.to_string());
            }
            let others = rules.iter().filter(|r| r.marker != rule.marker);
            out.foreign += usize::from(others.into_iter().any(|r| prompt.contains(r.marker)));
            out.tasks += 1;
        }
        out.complied.push(complied);
    }
    let whole = profile_whole(target).await?;
    for (k, t) in unrelated.iter().enumerate() {
        let (_, prompt) = ask(fake, target, &format!("other-{k}"), t).await?;
        out.unrelated += 1;
        // Learned rules standing among the skills are only shown when all of them fit.
        let memory_title = format!("### {}", metaclaw_memory::render::PROFILE_TITLE);
        let mut titles = vec![metaclaw_skills::retrieval::STANDING_TITLE];
        if whole {
            titles.push(&memory_title);
        }
        let (profile, rest) = split_profile(&prompt, &titles);
        out.profiled += usize::from(rules.iter().any(|r| profile.contains(r.marker)));
        let found: Vec<String> = rules
            .iter()
            .filter(|r| rest.contains(r.marker))
            .map(|r| r.marker.to_string())
            .collect();
        if !found.is_empty() {
            out.leaked += 1;
            out.leaks.push((t.to_string(), found));
        }
    }
    Ok(out)
}

/// Whether the standing-rules profile is shown whole in every prompt (memory on, the
/// profile on and within its budget).
async fn profile_whole(target: &Target) -> Result<bool> {
    let status = http::admin(target.addr, &target.admin_token, "/api/status").await?;
    if !status["memory"].is_object() {
        return Ok(false);
    }
    let p = http::admin(target.addr, &target.admin_token, "/api/memory/profile").await?;
    Ok(p["on"] == true && p["whole"] == true)
}

/// The standing-rules groups of `prompt` (raw request bodies), those headed by one of
/// `titles`, and the rest. A group runs from its title to the next heading or the end of
/// the JSON string holding it.
pub fn split_profile(prompt: &str, titles: &[&str]) -> (String, String) {
    let (mut profile, mut rest) = (String::new(), String::new());
    let mut tail = prompt;
    let next = |tail: &str| {
        titles
            .iter()
            .filter_map(|t| tail.find(t).map(|i| (i, t.len())))
            .min()
    };
    while let Some((start, len)) = next(tail) {
        rest.push_str(&tail[..start]);
        let after = &tail[start + len..];
        let end = group_end(after);
        profile.push_str(&after[..end]);
        tail = &after[end..];
    }
    rest.push_str(tail);
    (profile, rest)
}

/// Where a profile group's text ends: the next heading, or an unescaped quote.
fn group_end(text: &str) -> usize {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            '#' => return i,
            '"' if !escaped => return i,
            _ => {}
        }
        escaped = c == '\\' && !escaped;
    }
    text.len()
}

/// Asks `text` in a new conversation; returns the answer and the prompt the model received
/// for it (raw request bodies holding the text, learning calls excluded).
async fn ask(
    fake: &FakeUpstream,
    target: &Target,
    session: &str,
    text: &str,
) -> Result<(String, String)> {
    fake.clear_requests();
    let messages = json!([{"role": "user", "content": text}]);
    let answer = http::chat(target.addr, &target.proxy_key, session, messages, false).await?;
    let prompt = fake
        .requests()
        .into_iter()
        .filter(|r| r.body.get("response_format").is_none() && r.raw.contains(text))
        .map(|r| r.raw)
        .collect::<Vec<_>>()
        .join("\n");
    Ok((answer, prompt))
}

/// Learning counters read from the admin API.
#[derive(Debug, Clone, Default)]
struct Counts {
    extractions: u64,
    evolutions: u64,
    preferences: u64,
    skills_added: u64,
    /// Skills in the library now in force, and the added ones it should hold.
    skills_in_force: u64,
}

async fn counts(target: &Target) -> Result<Counts> {
    let status = http::admin(target.addr, &target.admin_token, "/api/status").await?;
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let stats = if status["memory"].is_object() {
        http::admin(target.addr, &target.admin_token, "/api/memory/stats").await?
    } else {
        Value::Null
    };
    let skills = &status["skills"];
    Ok(Counts {
        extractions: n(&status["learning_calls"]["by_purpose"]["extraction"]["calls"]),
        evolutions: n(&skills["evolutions"]) + n(&skills["evolutions_failed"]),
        preferences: n(&stats["by_kind"]["preference"]),
        skills_added: n(&skills["skills_added"]),
        skills_in_force: n(&skills["count"]),
    })
}

/// Polls until every rule's conversation was learned from: each session-end job ran and
/// what it wrote is in force (memories stored; added skills in the reloaded library).
/// Returns the counts and whether `wait` ran out first.
async fn settle(
    target: &Target,
    setup: Setup,
    sessions: u64,
    before: &Counts,
    wait: Duration,
) -> Result<(Counts, bool)> {
    let deadline = Instant::now() + wait;
    loop {
        let now = counts(target).await?;
        let memory_done = !setup.extracts()
            || now.extractions >= before.extractions + sessions
                && now.preferences >= before.preferences + sessions;
        let added = now.skills_added - before.skills_added.min(now.skills_added);
        let skills_done = !setup.evolves()
            || now.evolutions >= before.evolutions + sessions
                && now.skills_in_force >= before.skills_in_force + added;
        if memory_done && skills_done {
            return Ok((now, false));
        }
        if Instant::now() >= deadline {
            return Ok((now, true));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_group_is_told_apart_from_the_rest_of_the_prompt() {
        let title = metaclaw_memory::render::PROFILE_TITLE;
        let body = format!(
            r#"{{"messages":[{{"role":"system","content":"Memory\n\n### {title}\n- Always use \"Celsius\".\n\n### Facts\n- DD.MM.YYYY"}},{{"role":"user","content":"hi ### x"}}]}}"#
        );
        let heading = format!("### {title}");
        let (profile, rest) = split_profile(&body, &[&heading]);
        assert!(
            profile.contains("Celsius") && !profile.contains("DD.MM"),
            "{profile}"
        );
        assert!(
            rest.contains("DD.MM.YYYY") && !rest.contains("Celsius"),
            "{rest}"
        );
        assert!(rest.contains("hi ### x"));
        let (whole, _) = split_profile(&body, &[]);
        assert!(whole.is_empty());
        let (profile, rest) = split_profile("no profile here", &[&heading]);
        assert_eq!((profile.as_str(), rest.as_str()), ("", "no profile here"));
    }
}
