//! Picks what `/ui/` serves: the built web UI (`ui/dist`, made by `npm --prefix ui run
//! build`) when it exists, else a small page saying how to build it. The Rust build never
//! needs npm.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let ui = manifest.join("../../ui");
    let dist = ui.join("dist");
    let fallback = manifest.join("ui-fallback");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", fallback.display());
    let built = dist.join("index.html").is_file();
    let dir = if built {
        // A directory is scanned as a whole: any rebuilt asset re-embeds.
        println!("cargo:rerun-if-changed={}", dist.display());
        dist
    } else {
        // Watching a path that does not exist would rerun this on every build; the UI's
        // folder exists in the repository, and a build creates `dist` inside it.
        if ui.is_dir() {
            println!("cargo:rerun-if-changed={}", ui.display());
        }
        fallback
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    println!("cargo:rustc-env=METACLAW_UI_DIR={}", dir.display());
    // The embedded files' fingerprint: a changed asset changes this variable, which makes
    // rustc recompile the crate (the embedding macro itself does not track files).
    let mut hasher = DefaultHasher::new();
    stamp(&dir, &dir, &mut hasher);
    println!("cargo:rustc-env=METACLAW_UI_STAMP={:016x}", hasher.finish());
}

fn stamp(root: &Path, dir: &Path, hasher: &mut DefaultHasher) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            stamp(root, &path, hasher);
        } else {
            path.strip_prefix(root).unwrap_or(&path).hash(hasher);
            std::fs::read(&path).unwrap_or_default().hash(hasher);
        }
    }
}
