//! Embeds the repo's `skills/*/SKILL.md` bank. A build script rather than `include_dir`:
//! `rerun-if-changed` on the folder makes cargo rebuild when a skill folder is added or
//! removed, which `include_dir` only notices on nightly.

use std::path::PathBuf;
use std::{env, fs};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bank = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?).join("../../skills");
    println!("cargo:rerun-if-changed={}", bank.display());
    let mut entries = Vec::new();
    if let Ok(dir) = fs::read_dir(&bank) {
        for entry in dir {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let file = entry.path().join("SKILL.md");
            if !name.starts_with('.') && file.is_file() {
                entries.push((name, fs::canonicalize(file)?));
            }
        }
    }
    entries.sort();
    let mut out = String::from("&[\n");
    for (name, file) in entries {
        let file = file.to_string_lossy();
        out.push_str(&format!("    ({name:?}, include_str!({file:?})),\n"));
    }
    out.push(']');
    fs::write(PathBuf::from(env::var("OUT_DIR")?).join("bank.rs"), out)?;
    Ok(())
}
