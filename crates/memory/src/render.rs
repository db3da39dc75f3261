//! The memory part of the injected context block, within a token budget.
//!
//! The standing-rules profile (see `search::profile`) comes first, in a group of its own and
//! within a budget of its own (`profile_tokens`, on top of the memory budget). Pinned units
//! come next and may use at most `pinned_share` of the budget; query hits fill the rest in
//! rank order. Each unit goes in whole or not at all: one too large for
//! what is left is skipped and a smaller one after it may still fit. Units are grouped by
//! kind in a fixed order, and keep their selection order within a group, so the same
//! inputs always render the same bytes (which keeps the provider's prompt cache warm).

pub use metaclaw_wire::tokens::estimate_tokens;
use std::collections::HashSet;

use serde::Serialize;

use crate::policy::RetrievalPolicy;
use crate::search::Hit;
use crate::unit::{Kind, MemoryUnit};

/// The first line stays what the earlier version wrote, for compatibility.
const HEADING: &str = "## Relevant Long-Term Memory\nRemembered from earlier conversations. \
It may be out of date: what the user says now takes precedence.";
/// Longest bullet, in characters; longer contents end with an ellipsis.
const MAX_BULLET_CHARS: usize = 500;

/// The rendered section and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct RenderedMemory {
    pub text: String,
    /// Ids of the units included, in selection order (pinned first, then by rank).
    pub ids: Vec<String>,
    /// Estimated tokens of `text`.
    pub tokens: usize,
}

/// The group title of a kind, in the order groups are rendered (`Kind::ALL`).
pub fn group_title(kind: Kind) -> &'static str {
    match kind {
        Kind::Preference => "Preferences",
        Kind::ProjectState => "Project state",
        Kind::ProceduralObservation => "Workflow rules",
        Kind::Semantic => "Facts",
        Kind::WorkingSummary => "Latest session summary",
        Kind::Episodic => "Earlier conversations",
    }
}

/// The title of the profile's group, rendered before every other group.
pub const PROFILE_TITLE: &str = "Standing rules and preferences (apply them whenever they fit)";

/// Renders pinned units (first, at most `max_pinned`, within the pinned share) and then as
/// many unpinned query hits (at most `max_units`) as fit in `budget_tokens`; `None` when
/// nothing fits.
pub fn render_memories(
    pinned: &[MemoryUnit],
    hits: &[Hit],
    budget_tokens: usize,
    policy: &RetrievalPolicy,
) -> Option<RenderedMemory> {
    render_with_profile(&[], pinned, hits, budget_tokens, policy)
}

/// Whether all of `profile` fits in `cap` tokens as its group.
pub fn profile_fits(profile: &[MemoryUnit], cap: usize) -> bool {
    let mut used = estimate_tokens(&format!("\n\n### {PROFILE_TITLE}"));
    for unit in profile {
        if let Some(text) = bullet_text(unit) {
            used += estimate_tokens(&bullet(&text));
        }
    }
    used <= cap
}

/// [`render_memories`] with the standing-rules `profile` first, in its own group, as many
/// as fit in `policy.profile_tokens` (in the order given), on top of `budget_tokens`.
pub fn render_with_profile(
    profile: &[MemoryUnit],
    pinned: &[MemoryUnit],
    hits: &[Hit],
    budget_tokens: usize,
    policy: &RetrievalPolicy,
) -> Option<RenderedMemory> {
    let profile_cap = policy.profile_tokens;
    let mut sel = Selection::new(budget_tokens.saturating_add(profile_cap))?;
    let mut profile_used = 0;
    for unit in profile {
        if sel.ids.contains(unit.id.as_str()) {
            continue;
        }
        let Some(text) = bullet_text(unit) else {
            continue;
        };
        let heading = if sel.profile.is_empty() {
            profile_heading_cost()
        } else {
            0
        };
        let cost = estimate_tokens(&bullet(&text)) + heading;
        if profile_used + cost <= profile_cap && sel.used + cost <= sel.budget {
            sel.used += cost;
            sel.ids.insert(unit.id.as_str());
            sel.profile.insert(unit.id.as_str());
            sel.units.push((unit, text));
            profile_used += cost;
        }
    }
    // What the profile left unused is not given to the other units.
    sel.budget = budget_tokens.saturating_add(profile_used);
    let pinned_cap =
        (budget_tokens as f64 * f64::from(policy.pinned_share.clamp(0.0, 1.0))).floor() as usize;
    let mut pinned_used = 0;
    for unit in pinned.iter().take(policy.max_pinned) {
        if let Some((cost, text)) = sel.cost(unit)
            && pinned_used + cost <= pinned_cap
            && sel.take(unit, cost, text)
        {
            pinned_used += cost;
        }
    }
    let mut from_hits = 0;
    // Pinned units go only through the pinned share, never as ordinary hits.
    for hit in hits.iter().filter(|h| !h.unit.pinned) {
        if from_hits >= policy.max_units {
            break;
        }
        if let Some((cost, text)) = sel.cost(&hit.unit)
            && sel.take(&hit.unit, cost, text)
        {
            from_hits += 1;
        }
    }
    sel.finish()
}

/// Units chosen so far and the tokens they cost.
struct Selection<'a> {
    budget: usize,
    used: usize,
    units: Vec<(&'a MemoryUnit, String)>,
    ids: HashSet<&'a str>,
    groups: HashSet<Kind>,
    /// Ids rendered in the profile's group.
    profile: HashSet<&'a str>,
}

impl<'a> Selection<'a> {
    fn new(budget: usize) -> Option<Selection<'a>> {
        let used = estimate_tokens(HEADING);
        (used <= budget).then(|| Selection {
            budget,
            used,
            units: Vec::new(),
            ids: HashSet::new(),
            groups: HashSet::new(),
            profile: HashSet::new(),
        })
    }

    /// What adding `unit` would cost (its bullet, and its group's title when the group is
    /// new), with its bullet text; `None` when it is already in or has nothing to show.
    fn cost(&self, unit: &MemoryUnit) -> Option<(usize, String)> {
        if self.ids.contains(unit.id.as_str()) {
            return None;
        }
        let text = bullet_text(unit)?;
        let mut cost = estimate_tokens(&bullet(&text));
        if !self.groups.contains(&unit.kind) {
            cost += estimate_tokens(&group_heading(unit.kind));
        }
        Some((cost, text))
    }

    /// Adds `unit` (as `text`, from `cost`) when `cost` fits in what is left.
    fn take(&mut self, unit: &'a MemoryUnit, cost: usize, text: String) -> bool {
        if self.used + cost > self.budget {
            return false;
        }
        self.used += cost;
        self.ids.insert(unit.id.as_str());
        self.groups.insert(unit.kind);
        self.units.push((unit, text));
        true
    }

    fn finish(self) -> Option<RenderedMemory> {
        if self.units.is_empty() {
            return None;
        }
        let mut text = String::from(HEADING);
        let in_profile = |u: &MemoryUnit| self.profile.contains(u.id.as_str());
        if !self.profile.is_empty() {
            text.push_str(&format!("\n\n### {PROFILE_TITLE}"));
            for (_, line) in self.units.iter().filter(|(u, _)| in_profile(u)) {
                text.push_str(&bullet(line));
            }
        }
        for kind in Kind::ALL {
            let mut group = self
                .units
                .iter()
                .filter(|(u, _)| u.kind == kind && !in_profile(u))
                .peekable();
            if group.peek().is_none() {
                continue;
            }
            text.push_str(&group_heading(kind));
            for (_, line) in group {
                text.push_str(&bullet(line));
            }
        }
        let tokens = estimate_tokens(&text);
        Some(RenderedMemory {
            text,
            ids: self.units.iter().map(|(u, _)| u.id.clone()).collect(),
            tokens,
        })
    }
}

fn profile_heading_cost() -> usize {
    estimate_tokens(&format!("\n\n### {PROFILE_TITLE}"))
}

fn group_heading(kind: Kind) -> String {
    format!("\n\n### {}", group_title(kind))
}

fn bullet(text: &str) -> String {
    format!("\n- {text}")
}

/// The content (or the summary when the content is empty) on one line, capped.
fn bullet_text(unit: &MemoryUnit) -> Option<String> {
    let source = if unit.content.trim().is_empty() {
        &unit.summary
    } else {
        &unit.content
    };
    let line = source.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return None;
    }
    if line.chars().count() <= MAX_BULLET_CHARS {
        return Some(line);
    }
    let cut: String = line.chars().take(MAX_BULLET_CHARS).collect();
    Some(format!("{}…", cut.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit::{Source, Status};

    fn unit(id: &str, kind: Kind, content: &str, pinned: bool) -> MemoryUnit {
        MemoryUnit {
            id: id.into(),
            scope: "default".into(),
            kind,
            content: content.into(),
            summary: String::new(),
            fact_key: None,
            importance: 0.5,
            confidence: 0.8,
            pinned,
            status: Status::Active,
            superseded_by: None,
            source: Source::Manual,
            source_session: None,
            source_turn: None,
            tags: vec![],
            entities: vec![],
            access_count: 0,
            last_accessed_ms: None,
            created_ms: 0,
            updated_ms: 0,
            expires_ms: None,
            version: 1,
        }
    }

    fn hit(u: MemoryUnit) -> Hit {
        Hit {
            unit: u,
            score: 1.0,
            components: Default::default(),
            matched_terms: vec![],
            reason: String::new(),
        }
    }

    #[test]
    fn groups_in_fixed_order_with_single_line_bullets() {
        let hits = vec![
            hit(unit(
                "b",
                Kind::Episodic,
                "We talked\n about  deploys.",
                false,
            )),
            hit(unit("a", Kind::Preference, "Prefers tabs.", false)),
        ];
        let r = render_memories(&[], &hits, 1000, &RetrievalPolicy::default()).unwrap();
        assert!(r.text.starts_with("## Relevant Long-Term Memory\n"));
        let prefs = r.text.find("### Preferences\n- Prefers tabs.").unwrap();
        let earlier = r
            .text
            .find("### Earlier conversations\n- We talked about deploys.")
            .unwrap();
        assert!(prefs < earlier);
        assert_eq!(r.ids, vec!["b", "a"]);
        assert_eq!(r.tokens, estimate_tokens(&r.text));
    }

    #[test]
    fn long_content_is_capped_with_an_ellipsis() {
        let long = "word ".repeat(300);
        let hits = vec![hit(unit("a", Kind::Semantic, &long, false))];
        let r = render_memories(&[], &hits, 10_000, &RetrievalPolicy::default()).unwrap();
        let line = r.text.lines().last().unwrap();
        assert!(line.ends_with('…'));
        assert!(line.chars().count() <= MAX_BULLET_CHARS + 3);
    }

    #[test]
    fn nothing_fits_gives_none() {
        let hits = vec![hit(unit("a", Kind::Semantic, "x", false))];
        assert!(render_memories(&[], &hits, 5, &RetrievalPolicy::default()).is_none());
        assert!(render_memories(&[], &[], 1000, &RetrievalPolicy::default()).is_none());
        let empty = vec![hit(unit("a", Kind::Semantic, "  \n ", false))];
        assert!(render_memories(&[], &empty, 1000, &RetrievalPolicy::default()).is_none());
    }
}
