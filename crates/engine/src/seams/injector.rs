//! The engine's injector: the skills and memories that fit this turn, in one block within
//! `injection.token_budget`.
//!
//! Skills and memory are retrieved side by side, so the question is embedded once while
//! memory reads what it finds by words. The budget split then adapts to what is relevant:
//! memory gets half the budget when skills matched and all of it when none did; skills are
//! rendered in whatever memory left. Either part alone can use the whole budget.

use std::sync::Arc;

use metaclaw_proxy::seams::{BoxFuture, Injection, Injector, TurnContext};
use metaclaw_skills::render_with_standing;
use metaclaw_skills::retrieval::Hit;

use crate::memory::Memory;
use crate::skills::SemanticQuery;
use crate::skills::snapshot::{CurrentSkills, Snapshot};

pub struct ContextInjector {
    /// `None` when skills are switched off.
    skills: Option<CurrentSkills>,
    /// `None` in the `template` retrieval mode.
    semantic: Option<Arc<SemanticQuery>>,
    /// `None` when memory is switched off.
    memory: Option<Memory>,
    /// `injection.token_budget`.
    budget: usize,
}

impl ContextInjector {
    pub fn new(
        skills: Option<CurrentSkills>,
        semantic: Option<Arc<SemanticQuery>>,
        memory: Option<Memory>,
        budget: usize,
    ) -> Self {
        ContextInjector {
            skills,
            semantic,
            memory,
            budget,
        }
    }

    async fn build(&self, turn: &TurnContext) -> Option<Injection> {
        let snapshot = self.skills.as_ref().map(CurrentSkills::get);
        let skills = async {
            match (&snapshot, &self.semantic) {
                (Some(snap), Some(semantic)) => semantic.retrieve(snap, &turn.query).await,
                // Lexical retrieval is microseconds with the built-in bank and well under a
                // millisecond with 10,000 skills (see the skills bench): no thread hop.
                (Some(snap), None) => snap.retrieve(&turn.query),
                (None, _) => Vec::new(),
            }
        };
        let memory = async {
            match &self.memory {
                Some(m) if self.budget > 0 => m.find(&turn.scope, &turn.query).await,
                _ => None,
            }
        };
        // Memory first, so its read by words is under way before skills' lexical ranking
        // (synchronous without embeddings) takes this thread.
        let (found, hits) = tokio::join!(memory, skills);
        let memory_budget = if hits.is_empty() {
            self.budget
        } else {
            self.budget / 2
        };
        let memory = match (&self.memory, found) {
            (Some(m), Some(found)) => m.render(found, memory_budget),
            _ => None,
        };
        let left = self.budget - memory.as_ref().map_or(0, |m| m.tokens.min(self.budget));
        let skills = snapshot.as_ref().and_then(|snap| render(snap, &hits, left));
        let (skills_text, names) = match skills {
            Some((text, names)) => (Some(text), names),
            None => (None, Vec::new()),
        };
        let (memory_text, memory_ids) = match memory {
            Some(m) => (Some(m.text), m.ids),
            None => (None, Vec::new()),
        };
        let parts: Vec<String> = skills_text.into_iter().chain(memory_text).collect();
        if parts.is_empty() {
            return None;
        }
        Some(Injection::carrying(parts.join("\n\n"), names, &memory_ids))
    }
}

fn render(snapshot: &Snapshot, hits: &[Hit], budget: usize) -> Option<(String, Vec<String>)> {
    let skills = |standing: bool| {
        hits.iter()
            .filter(move |h| h.standing == standing)
            .filter_map(|h| snapshot.library.get(&h.name))
    };
    let rendered = render_with_standing(skills(true), skills(false), budget)?;
    Some((rendered.text, rendered.skills))
}

impl Injector for ContextInjector {
    fn context_block<'a>(&'a self, turn: &'a TurnContext) -> BoxFuture<'a, Option<Injection>> {
        Box::pin(self.build(turn))
    }

    fn generation(&self) -> u64 {
        self.skills.as_ref().map_or(0, |s| s.get().generation)
    }

    fn active(&self) -> bool {
        self.skills.is_some() || self.memory.is_some()
    }
}
