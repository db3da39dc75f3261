//! The engine's side of skills: the live library, its generation, semantic retrieval, and
//! evolution.

pub mod evolution;
pub mod generation;
pub mod query;
pub mod runtime;
pub mod semantic;
pub mod snapshot;
pub mod team_sync;

pub use query::SemanticQuery;
pub use runtime::SkillsRuntime;
pub use semantic::SemanticSetup;
pub use snapshot::{CurrentSkills, Snapshot};
