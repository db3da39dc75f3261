//! `skills export`: a library's skills as standard skill folders (Agent Skills layout:
//! `<name>/SKILL.md` with `name` and `description` in the front matter, resource files
//! beside it), with where each came from: learned ones carry the sessions they were learned
//! from, when, the evolver model and the library's generation.

use std::fs;
use std::path::Path;

use crate::library::Library;
use crate::parse::SkillError;
use crate::quarantine::copy_resources;
use crate::skill::{Provenance, Source};
use crate::write::write_skill_atomically;

/// Writes the skills of `library` (only learned ones with `learned_only`) under `out`, one
/// folder each, replacing folders of the same names there. Returns the names written.
pub fn export(
    library: &Library,
    out: &Path,
    learned_only: bool,
    generation: Option<u64>,
) -> Result<Vec<String>, SkillError> {
    fs::create_dir_all(out).map_err(|e| SkillError::io(out, e))?;
    let mut written = Vec::new();
    for skill in &library.skills {
        if learned_only && skill.source != Source::Evolved {
            continue;
        }
        let mut skill = skill.clone();
        if skill.source == Source::Evolved {
            skill
                .provenance
                .get_or_insert_with(Provenance::default)
                .generation = generation;
        }
        let from = skill.path.take();
        let folder = out.join(&skill.name);
        if let Some(dir) = from.as_deref().and_then(Path::parent) {
            fs::create_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
            copy_resources(dir, &folder)?;
        }
        write_skill_atomically(out, &skill)?;
        written.push(skill.name);
    }
    Ok(written)
}
