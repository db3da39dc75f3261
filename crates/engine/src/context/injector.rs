//! The engine's injector: the skills that fit this turn, rendered within the token budget.
//! Memory adds its part to the same block (and shares the budget) when it lands.

use std::sync::Arc;

use metaclaw_proxy::seams::{BoxFuture, Injection, Injector, TurnContext};
use metaclaw_skills::render_skills;
use metaclaw_skills::retrieval::Hit;

use crate::skills::SemanticQuery;
use crate::skills::snapshot::{CurrentSkills, Snapshot};

pub struct ContextInjector {
    /// `None` when skills are switched off.
    skills: Option<CurrentSkills>,
    /// `None` in the `template` retrieval mode.
    semantic: Option<Arc<SemanticQuery>>,
    /// `injection.token_budget`.
    budget: usize,
}

impl ContextInjector {
    pub fn new(
        skills: Option<CurrentSkills>,
        semantic: Option<Arc<SemanticQuery>>,
        budget: usize,
    ) -> Self {
        ContextInjector {
            skills,
            semantic,
            budget,
        }
    }

    /// Lexical retrieval and rendering, synchronous: microseconds with the built-in bank,
    /// well under a millisecond with 10,000 skills (see the skills bench), so no thread hop.
    pub fn build(&self, query: &str) -> Option<Injection> {
        let snapshot = self.skills.as_ref()?.get();
        let hits = snapshot.retrieve(query);
        self.render(&snapshot, &hits)
    }

    /// Semantic or fused retrieval: waits at most `skills.embedding_timeout_ms` for the
    /// query's vector, then falls back to [`Self::build`]'s lexical hits.
    async fn build_semantic(&self, semantic: &SemanticQuery, query: &str) -> Option<Injection> {
        let snapshot = self.skills.as_ref()?.get();
        let hits = semantic.retrieve(&snapshot, query).await;
        self.render(&snapshot, &hits)
    }

    fn render(&self, snapshot: &Snapshot, hits: &[Hit]) -> Option<Injection> {
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
        match &self.semantic {
            Some(semantic) => Box::pin(self.build_semantic(semantic, &turn.query)),
            None => {
                let injection = self.build(&turn.query);
                Box::pin(async move { injection })
            }
        }
    }

    fn generation(&self) -> u64 {
        self.skills.as_ref().map_or(0, |s| s.get().generation)
    }

    fn active(&self) -> bool {
        self.skills.is_some()
    }
}
