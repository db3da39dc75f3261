//! The engine's side of skills: the live library, its generation, and evolution.

pub mod evolution;
pub mod generation;
pub mod runtime;
pub mod snapshot;

pub use runtime::SkillsRuntime;
pub use snapshot::{CurrentSkills, Snapshot};
