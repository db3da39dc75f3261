//! Skills: short Markdown instructions picked for each turn and injected into the prompt.

pub mod library;
pub mod parse;
pub mod retrieval;
pub mod skill;
pub mod write;

pub use library::Library;
pub use parse::{SkillError, parse_skill};
pub use skill::{Provenance, Skill, Source};
pub use write::{render_skill, write_skill_atomically};
