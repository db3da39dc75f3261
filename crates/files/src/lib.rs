//! Writing files so a reader, or the next start after a crash, sees the old file or the new
//! one, never half of one: a temporary file beside the target (same filesystem, so the rename
//! is atomic), fsync, rename over the target, fsync the directory. Skill files, agents'
//! configs, MetaClaw's own run files and the training pause all go through here.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Numbers temporary files, so two writes in one process never share one.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Replaces `path` with `bytes` atomically. With `mode` (Unix permission bits, e.g. `0o600`)
/// the new file has exactly that mode, whatever the umask; without, the process's default.
/// The directory must exist. The temporary file's name starts with a dot and the target's
/// name (`.SKILL.md.…tmp`), so directory readers that skip dotfiles never see it, and it is
/// removed when the write fails.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let result = (|| {
        let mut file = create(&tmp, mode)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)?;
        sync_dir(&dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn create(path: &Path, mode: Option<u32>) -> io::Result<File> {
    let mut options = OpenOptions::new();
    // Truncating: a temporary file left by a crashed process with the same id is reused.
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if let Some(mode) = mode {
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    }
    let file = options.open(path)?;
    // The umask may have narrowed the mode at creation; set it exactly.
    #[cfg(unix)]
    if let Some(mode) = mode {
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    Ok(file)
}

/// Makes a rename durable; best effort (not every platform can open a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_file_whole_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        write_atomic(&path, b"{\"a\":1}", None).unwrap();
        write_atomic(&path, b"{\"a\":2}", None).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"{\"a\":2}");
        assert_eq!(names(dir.path()), ["config.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn the_mode_is_exact_for_new_and_replaced_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        fs::write(&path, b"old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&path, b"secret", Some(0o600)).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        write_atomic(&path, b"script", Some(0o755)).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pause.json");
        fs::write(&path, b"old").unwrap();
        // The target is now a directory: the rename fails.
        let blocked = dir.path().join("blocked");
        fs::create_dir(&blocked).unwrap();
        fs::write(blocked.join("inside"), b"x").unwrap();
        assert!(write_atomic(&blocked, b"new", None).is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["blocked", "pause.json"]);
    }

    #[test]
    fn a_missing_directory_is_an_error_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("x");
        let err = write_atomic(&path, b"x", None).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(!dir.path().join("missing").exists());
    }
}
