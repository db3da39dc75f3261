//! Skills: short Markdown instructions picked for each turn and injected into the prompt.

pub mod bank;
pub mod evolve;
pub mod export;
mod format;
pub mod gate;
pub mod history;
pub mod import;
pub mod library;
pub mod migrate;
pub mod outside;
pub mod parse;
pub mod proposals;
pub mod quarantine;
pub mod render;
pub mod retrieval;
pub mod skill;
pub mod team;
pub mod watch;
pub mod write;

pub use bank::{InstallReport, builtin_skills, install_builtins};
pub use library::Library;
pub use migrate::{MigrationReport, migrate_library};
pub use parse::{Parsed, SkillError, parse_skill, read_skill};
pub use render::{Rendered, estimate_tokens, render_skills, render_with_standing};
pub use skill::{CATEGORIES, Extra, Provenance, Skill, Source};
pub use watch::{SharedLibrary, WatchGuard, watch};
pub use write::{render_skill, write_skill_atomically};
