//! Long-term memory: units of six kinds per scope, extracted from conversations, reconciled
//! with what is already known, retrieved for each turn, and browsable by people.

pub mod adapt;
pub mod consolidate;
pub mod db;
mod error;
pub mod extract;
pub mod policy;
pub mod reconcile;
pub mod render;
pub mod search;
pub mod text;
pub mod unit;

pub use error::MemoryError;
pub use extract::{Candidate, TurnText};
pub use policy::{KindBoosts, PolicyError, RetrievalPolicy};
pub use reconcile::{Decision, decide, reconcile_batch, similarity};
pub use render::{RenderedMemory, estimate_tokens, render_memories};
pub use search::{
    Components, Found, Hit, Prepared, Retrieval, SearchQuery, pinned, retrieve,
    retrieve_for_prompt, search, search_with, standing_plan,
};
pub use unit::{Kind, MemoryUnit, NewUnit, Source, Status};
