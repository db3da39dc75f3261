//! Installing a model from a folder or a `.zip` archive.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{EmbedError, IoContext, Result, invalid};
use crate::layout;
use crate::store::{Installed, ModelStore};

/// No file of a sentence-embedding model comes near this; a larger entry is a zip bomb.
const MAX_FILE: u64 = 4 << 30;

impl ModelStore {
    /// Installs the model at `source` (a folder, or a zip archive with the files at its top
    /// or inside one top-level folder) as `name`, replacing any model of that name only once
    /// the new one has loaded and computed a vector. Only the model's own files are copied
    /// (see the layout), not ONNX or PyTorch copies of the weights. The result tells whether
    /// it is the default model; [`Installed::warning`] says what to tell the user if not.
    pub fn import(&self, source: &Path, name: &str) -> Result<Installed> {
        self.dir(name)?;
        let meta = std::fs::metadata(source).at(source)?;
        let staged = self.stage()?;
        if meta.is_dir() {
            copy_folder(source, staged.path())?;
        } else {
            extract_zip(source, staged.path())?;
        }
        self.commit(staged, name)
    }
}

fn copy_folder(source: &Path, dest: &Path) -> Result<()> {
    let root = folder_root(source)?;
    for file in layout::known_files() {
        let from = root.join(file);
        if !from.is_file() {
            continue;
        }
        let to = dest.join(file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).at(parent)?;
        }
        std::fs::copy(&from, &to).at(&from)?;
    }
    layout::check(dest).map_err(|_| missing(&root, dest))
}

/// The folder itself, or its only subfolder holding a `config.json`.
fn folder_root(source: &Path) -> Result<PathBuf> {
    if source.join(layout::CONFIG).is_file() {
        return Ok(source.to_path_buf());
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir(source).at(source)? {
        let path = entry.at(source)?.path();
        if path.join(layout::CONFIG).is_file() {
            found.push(path);
        }
    }
    match found.len() {
        1 => Ok(found.swap_remove(0)),
        _ => Ok(source.to_path_buf()),
    }
}

fn extract_zip(source: &Path, dest: &Path) -> Result<()> {
    let file = File::open(source).at(source)?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| EmbedError::NotAnArchive {
        path: source.to_path_buf(),
        reason: e.to_string(),
    })?;
    // Names that are not valid text cannot be ours; skipping them is fine.
    let names: Vec<String> = archive
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .collect();
    let prefix = zip_prefix(&names);
    for file in layout::known_files() {
        let Some(index) = archive.index_for_name(&format!("{prefix}{file}")) else {
            continue;
        };
        let mut entry = archive
            .by_index(index)
            .map_err(|e| invalid(source, format!("{file}: {e}")))?;
        if entry.size() > MAX_FILE {
            return Err(invalid(source, format!("{file} is implausibly large")));
        }
        let to = dest.join(file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).at(parent)?;
        }
        let mut out = File::create(&to).at(&to)?;
        let mut limited = (&mut entry).take(MAX_FILE);
        std::io::copy(&mut limited, &mut out)
            .map_err(|e| invalid(source, format!("{file} cannot be extracted: {e}")))?;
        out.flush().at(&to)?;
    }
    layout::check(dest).map_err(|_| missing(source, dest))
}

/// `""` when `config.json` is at the archive's top, `"<folder>/"` when it is inside exactly
/// one top-level folder.
fn zip_prefix(names: &[String]) -> String {
    if names.iter().any(|n| n == layout::CONFIG) {
        return String::new();
    }
    let mut tops = names.iter().filter_map(|n| {
        let (top, rest) = n.split_once('/')?;
        (rest == layout::CONFIG).then(|| format!("{top}/"))
    });
    match (tops.next(), tops.next()) {
        (Some(top), None) => top,
        _ => String::new(),
    }
}

/// The error naming the first required file the source lacks.
fn missing(source: &Path, staged: &Path) -> EmbedError {
    let file = layout::REQUIRED
        .into_iter()
        .find(|f| !staged.join(f).is_file())
        .unwrap_or(layout::CONFIG);
    EmbedError::MissingFile {
        dir: source.to_path_buf(),
        file: file.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::zip_prefix;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_model_may_sit_at_the_top_or_in_one_folder() {
        assert_eq!(zip_prefix(&names(&["config.json", "tokenizer.json"])), "");
        assert_eq!(
            zip_prefix(&names(&["m/", "m/config.json", "m/tokenizer.json"])),
            "m/"
        );
        // Two candidate folders: neither is chosen, and the missing file is reported.
        assert_eq!(zip_prefix(&names(&["a/config.json", "b/config.json"])), "");
        assert_eq!(zip_prefix(&names(&["a/b/config.json"])), "");
    }
}
