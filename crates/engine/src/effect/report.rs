//! The effect report (`/api/effect`): per skill and memory, what followed the turns that
//! carried it beside the turns without it; the holdout's two arms; and which skills are
//! flagged. Nothing is claimed from small samples: a flag or a verdict needs
//! [`MIN_SAMPLE`] labelled turns on each side and a difference beyond chance.

use metaclaw_store::{CarriedEffect, HoldoutArms, Outcome};
use serde::Serialize;

/// Labelled turns each side needs before a skill is flagged or the holdout judged.
pub const MIN_SAMPLE: u64 = 20;
/// One-sided 95%: a z-score above this is unlikely to be chance.
const Z_95: f64 = 1.645;
const MEMORY_PREFIX: &str = "memory:";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    #[serde(flatten)]
    pub outcome: Outcome,
    /// (corrections + repeats) / labelled; `None` before any turn was followed up.
    pub correction_rate: Option<f64>,
    /// thanks / labelled: the user's explicit word that the answer worked.
    pub thanks_rate: Option<f64>,
}

impl Figures {
    fn of(outcome: Outcome) -> Figures {
        Figures {
            correction_rate: rate(bad(&outcome), outcome.labelled),
            thanks_rate: rate(outcome.thanks, outcome.labelled),
            outcome,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemEffect {
    /// A skill name or a memory id.
    pub item: String,
    #[serde(flatten)]
    pub figures: Figures,
    /// The same rate over the labelled main turns without it.
    pub without_rate: Option<f64>,
    /// Why the skill is flagged, in a sentence; `None` when it is not.
    pub flag: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arm {
    #[serde(flatten)]
    pub figures: Figures,
    pub sessions: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Holdout {
    /// `learning.holdout` as configured.
    pub share: f64,
    pub with: Arm,
    pub without: Arm,
    /// The comparison in a sentence, once both arms have enough labelled turns.
    pub verdict: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectReport {
    pub days: u32,
    pub min_sample: u64,
    pub baseline: Figures,
    pub skills: Vec<ItemEffect>,
    pub memories: Vec<ItemEffect>,
    pub holdout: Holdout,
}

/// The report of a window from what the store counted.
pub fn report(
    days: u32,
    share: f64,
    items: Vec<CarriedEffect>,
    all: Outcome,
    arms: HoldoutArms,
) -> EffectReport {
    let (mut skills, mut memories) = (Vec::new(), Vec::new());
    for CarriedEffect { item, outcome } in items {
        let without_labelled = all.labelled.saturating_sub(outcome.labelled);
        let without_bad = bad(&all).saturating_sub(bad(&outcome));
        let without_rate = rate(without_bad, without_labelled);
        match item.strip_prefix(MEMORY_PREFIX) {
            Some(id) => memories.push(ItemEffect {
                item: id.to_owned(),
                figures: Figures::of(outcome),
                without_rate,
                flag: None,
            }),
            None => {
                let flag = flag(&outcome, without_bad, without_labelled);
                skills.push(ItemEffect {
                    item,
                    figures: Figures::of(outcome),
                    without_rate,
                    flag,
                });
            }
        }
    }
    let holdout = Holdout {
        share,
        verdict: verdict(&arms),
        with: Arm {
            figures: Figures::of(arms.with),
            sessions: arms.with_sessions,
        },
        without: Arm {
            figures: Figures::of(arms.without),
            sessions: arms.without_sessions,
        },
    };
    EffectReport {
        days,
        min_sample: MIN_SAMPLE,
        baseline: Figures::of(all),
        skills,
        memories,
        holdout,
    }
}

/// Answers the user did not accept: corrected, or asked for again.
fn bad(o: &Outcome) -> u64 {
    o.corrections + o.repeats
}

fn rate(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// A skill followed by corrections more often than turns without it, beyond chance.
fn flag(with: &Outcome, without_bad: u64, without_labelled: u64) -> Option<String> {
    if with.labelled < MIN_SAMPLE || without_labelled < MIN_SAMPLE {
        return None;
    }
    let z = higher_by_chance(bad(with), with.labelled, without_bad, without_labelled)?;
    (z >= Z_95).then(|| {
        format!(
            "Answers after it were corrected or asked again {} of the time ({} of {}), against {} without it ({} of {}).",
            percent(bad(with), with.labelled),
            bad(with),
            with.labelled,
            percent(without_bad, without_labelled),
            without_bad,
            without_labelled,
        )
    })
}

/// The holdout's comparison, once both arms have enough labelled turns.
fn verdict(arms: &HoldoutArms) -> Option<String> {
    let (with, without) = (&arms.with, &arms.without);
    if with.labelled < MIN_SAMPLE || without.labelled < MIN_SAMPLE {
        return None;
    }
    let (a, b) = (bad(with), bad(without));
    let rates = format!(
        "With MetaClaw's skills and memories, {} of the answers the user followed up on were corrected or asked again ({a} of {}, {} sessions); held out, {} ({b} of {}, {} sessions).",
        percent(a, with.labelled),
        with.labelled,
        arms.with_sessions,
        percent(b, without.labelled),
        without.labelled,
        arms.without_sessions,
    );
    let fewer = higher_by_chance(b, without.labelled, a, with.labelled).unwrap_or(0.0);
    let more = higher_by_chance(a, with.labelled, b, without.labelled).unwrap_or(0.0);
    let conclusion = if fewer >= Z_95 {
        "That is fewer corrections with them, beyond chance (95%)."
    } else if more >= Z_95 {
        "That is more corrections with them, beyond chance (95%): look at the flagged skills."
    } else {
        "The difference is within chance so far."
    };
    let thanks = format!(
        " The user said it worked after {} of the answers with them and {} held out.",
        percent(with.thanks, with.labelled),
        percent(without.thanks, without.labelled),
    );
    let judge = match (with.mean_reward, without.mean_reward) {
        (Some(x), Some(y)) if with.judged >= MIN_SAMPLE && without.judged >= MIN_SAMPLE => {
            format!(
                " Judge score: {x:.2} with ({} turns), {y:.2} held out ({} turns).",
                with.judged, without.judged
            )
        }
        _ => String::new(),
    };
    Some(format!("{rates} {conclusion}{thanks}{judge}"))
}

/// The two-proportion z-score that `a/n` is above `b/m`; `None` when it cannot be told
/// (no variance at all).
fn higher_by_chance(a: u64, n: u64, b: u64, m: u64) -> Option<f64> {
    let (a, n, b, m) = (a as f64, n as f64, b as f64, m as f64);
    let pooled = (a + b) / (n + m);
    let se = (pooled * (1.0 - pooled) * (1.0 / n + 1.0 / m)).sqrt();
    (se > 0.0).then(|| (a / n - b / m) / se)
}

fn percent(part: u64, whole: u64) -> String {
    format!("{:.0}%", 100.0 * part as f64 / whole.max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(turns: u64, labelled: u64, corrections: u64) -> Outcome {
        Outcome {
            turns,
            labelled,
            corrections,
            ..Outcome::default()
        }
    }

    fn item(name: &str, o: Outcome) -> CarriedEffect {
        CarriedEffect {
            item: name.into(),
            outcome: o,
        }
    }

    #[test]
    fn a_skill_corrected_more_than_the_rest_is_flagged_a_small_or_even_one_is_not() {
        // 100 labelled turns, 30 corrected: 20 of 25 with "bad", 10 of 75 without it.
        let all = outcome(120, 100, 30);
        let r = report(
            30,
            0.0,
            vec![
                item("bad", outcome(30, 25, 20)),
                item("even", outcome(40, 30, 9)),
                item("rare", outcome(12, 10, 10)),
                item("memory:m1", outcome(30, 25, 20)),
            ],
            all,
            HoldoutArms::default(),
        );
        let flags: Vec<(&str, bool)> = r
            .skills
            .iter()
            .map(|s| (s.item.as_str(), s.flag.is_some()))
            .collect();
        assert_eq!(flags, [("bad", true), ("even", false), ("rare", false)]);
        let why = r.skills[0].flag.as_deref().unwrap();
        assert!(why.contains("80% of the time (20 of 25)"), "{why}");
        assert!(why.contains("13% without it (10 of 75)"), "{why}");
        assert_eq!(r.skills[0].without_rate, Some(10.0 / 75.0));
        assert_eq!(r.skills[0].figures.correction_rate, Some(0.8));
        // Memories are reported under their id and never flagged.
        assert_eq!(r.memories[0].item, "m1");
        assert_eq!(r.memories[0].flag, None);
        assert_eq!(r.baseline.correction_rate, Some(0.3));
    }

    #[test]
    fn repeats_count_with_corrections_thanks_apart() {
        let o = Outcome {
            labelled: 10,
            corrections: 1,
            repeats: 2,
            thanks: 5,
            ..Outcome::default()
        };
        assert_eq!(Figures::of(o.clone()).correction_rate, Some(0.3));
        assert_eq!(Figures::of(o).thanks_rate, Some(0.5));
        assert_eq!(Figures::of(Outcome::default()).correction_rate, None);
    }

    #[test]
    fn the_holdout_is_judged_only_with_enough_turns_on_both_sides() {
        let arms = |with: Outcome, without: Outcome| HoldoutArms {
            with,
            with_sessions: 12,
            without,
            without_sessions: 4,
        };
        let small = report(
            30,
            0.2,
            Vec::new(),
            Outcome::default(),
            arms(outcome(200, 150, 15), outcome(30, 19, 9)),
        );
        assert_eq!(small.holdout.verdict, None, "19 held-out turns are too few");
        assert_eq!(small.holdout.without.sessions, 4);
        assert_eq!(small.holdout.share, 0.2);

        let fewer = report(
            30,
            0.2,
            Vec::new(),
            Outcome::default(),
            arms(outcome(200, 150, 15), outcome(60, 40, 16)),
        );
        let v = fewer.holdout.verdict.unwrap();
        assert!(v.contains("10% of the answers"), "{v}");
        assert!(v.contains("(15 of 150, 12 sessions)"), "{v}");
        assert!(v.contains("held out, 40% (16 of 40, 4 sessions)"), "{v}");
        assert!(
            v.contains("fewer corrections with them, beyond chance"),
            "{v}"
        );

        let alike = report(
            30,
            0.2,
            Vec::new(),
            Outcome::default(),
            arms(outcome(200, 150, 15), outcome(60, 40, 5)),
        );
        assert!(alike.holdout.verdict.unwrap().contains("within chance"));
    }

    #[test]
    fn judge_scores_join_the_verdict_with_enough_of_them() {
        let scored = |labelled, corrections, judged, mean| Outcome {
            judged,
            mean_reward: Some(mean),
            ..outcome(labelled, labelled, corrections)
        };
        let arms = HoldoutArms {
            with: scored(40, 4, 25, 0.6),
            with_sessions: 5,
            without: scored(40, 4, 25, 0.1),
            without_sessions: 5,
        };
        let v = report(30, 0.5, Vec::new(), Outcome::default(), arms)
            .holdout
            .verdict
            .unwrap();
        assert!(
            v.contains("Judge score: 0.60 with (25 turns), 0.10 held out (25 turns)."),
            "{v}"
        );
    }
}
