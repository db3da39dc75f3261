//! Skills: short Markdown instructions picked for each turn and injected into the prompt.

pub mod retrieval;
pub mod skill;

pub use skill::{Provenance, Skill, Source};
