//! The engine's injector: the skills that fit this turn, rendered within the token budget.
//! Memory adds its part to the same block (and shares the budget) when it lands.

use metaclaw_proxy::seams::{BoxFuture, Injection, Injector, TurnContext};
use metaclaw_skills::render_skills;

use crate::skills::snapshot::CurrentSkills;

pub struct ContextInjector {
    /// `None` when skills are switched off.
    skills: Option<CurrentSkills>,
    /// `injection.token_budget`.
    budget: usize,
}

impl ContextInjector {
    pub fn new(skills: Option<CurrentSkills>, budget: usize) -> Self {
        ContextInjector { skills, budget }
    }

    /// Retrieval and rendering, synchronous: microseconds with the built-in bank, well
    /// under a millisecond with 10,000 skills (see the skills bench), so no thread hop.
    pub fn build(&self, query: &str) -> Option<Injection> {
        let snapshot = self.skills.as_ref()?.get();
        let hits = snapshot.retrieve(query);
        let chosen = hits.iter().filter_map(|h| snapshot.library.get(&h.name));
        let rendered = render_skills(chosen, self.budget)?;
        Some(Injection {
            block: rendered.text,
            skills: rendered.skills,
        })
    }
}

impl Injector for ContextInjector {
    fn context_block<'a>(&'a self, turn: &'a TurnContext) -> BoxFuture<'a, Option<Injection>> {
        let injection = self.build(&turn.query);
        Box::pin(async move { injection })
    }

    fn generation(&self) -> u64 {
        self.skills.as_ref().map_or(0, |s| s.get().generation)
    }
}
