//! The benchmark's table and its verdict against the targets.

use std::fmt::Write;

use super::config::Setup;
use super::run::Outcome;
use super::scenario::{Kind, Rule, shared_words};

/// Compliance each learning setup must reach, and the most learning off may reach.
pub const MIN_LEARNED: f64 = 0.9;
pub const MAX_UNLEARNED: f64 = 0.1;
/// Share of unrelated tasks whose prompt may hold a rule retrieval picked for it (the
/// standing-rules profile, in every prompt by design while it fits, is counted apart).
pub const MAX_LEAK: f64 = 0.1;

/// Whether `outcome` meets the targets for `setup`.
pub fn meets(setup: Setup, outcome: &Outcome) -> bool {
    let compliance = outcome.compliance();
    let compliant = match setup {
        Setup::LearningOff => compliance <= MAX_UNLEARNED,
        _ => compliance >= MIN_LEARNED,
    };
    compliant && outcome.leak_rate() <= MAX_LEAK
}

/// What the scenario holds, in one line.
pub fn scenario_line(rules: &[Rule], unrelated: usize) -> String {
    let tasks: Vec<usize> = rules
        .iter()
        .flat_map(|r| r.tasks.iter().map(move |t| shared_words(r, t)))
        .collect();
    let mean = tasks.iter().sum::<usize>() as f64 / tasks.len().max(1) as f64;
    let none = tasks.iter().filter(|&&n| n == 0).count();
    let corrections = rules.iter().filter(|r| r.corrects.is_some()).count();
    format!(
        "{} rules ({} stated as corrections), {} later tasks, {} unrelated tasks; a later task \
         shares {mean:.2} content words with its rule on average ({none} share none)",
        rules.len(),
        corrections,
        tasks.len(),
        unrelated
    )
}

pub fn table(rows: &[(Setup, Outcome)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| setup | compliance | learned (memories / skills) | unrelated prompts with a retrieved rule (leaks) | unrelated prompts with the standing profile | later prompts with another rule | targets |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for (setup, o) in rows {
        let _ = writeln!(
            out,
            "| {} | {:.2} ({}/{}) | {} / {}{} | {:.0}% ({}/{}) | {}/{} | {}/{} | {} |",
            setup.label(),
            o.compliance(),
            o.complied.iter().sum::<usize>(),
            o.tasks,
            o.memories,
            o.skills,
            if o.timed_out { " (wait ran out)" } else { "" },
            100.0 * o.leak_rate(),
            o.leaked,
            o.unrelated,
            o.profiled,
            o.unrelated,
            o.foreign,
            o.tasks,
            if meets(*setup, o) { "met" } else { "MISSED" }
        );
    }
    out
}

/// Compliance per kind of rule, for the setups that learn.
pub fn by_kind(rules: &[Rule], rows: &[(Setup, Outcome)]) -> String {
    let kinds = [
        Kind::Format,
        Kind::Naming,
        Kind::Workflow,
        Kind::Tone,
        Kind::Language,
        Kind::Tool,
    ];
    let mut out = String::from("| kind |");
    for (s, _) in rows {
        let _ = write!(out, " {} |", s.label());
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(rows.len()));
    out.push('\n');
    for kind in kinds {
        let _ = write!(out, "| {kind:?} |");
        for (_, o) in rows {
            let (mut right, mut asked) = (0, 0);
            for (r, n) in rules.iter().zip(&o.complied) {
                if r.kind == kind {
                    right += n;
                    asked += r.tasks.len();
                }
            }
            let _ = write!(out, " {right}/{asked} |");
        }
        out.push('\n');
    }
    out
}
