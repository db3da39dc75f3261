//! What MetaClaw keeps to undo a connect: per agent a directory `<root>/<agent>/` (0700)
//! holding each touched file's original bytes (`<n>.orig`, 0600 — they may hold the user's
//! provider keys) and a `manifest.json` saying what was there, what MetaClaw wrote and
//! which keys it owns. The original is recorded on the first connect only, so connecting
//! again never replaces the pre-MetaClaw file with an already-edited one.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ClawError;
use crate::target::Mode;

/// The manifest layout; bumped if it ever changes incompatibly.
const MANIFEST_VERSION: u32 = 1;
const MANIFEST: &str = "manifest.json";

/// One file MetaClaw touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub path: PathBuf,
    /// Whether the file existed before MetaClaw first wrote it (if not, disconnect deletes
    /// it).
    pub existed: bool,
    /// SHA-256 (hex) of the original bytes; `None` when the file did not exist.
    pub original_sha256: Option<String>,
    /// The original's copy, relative to the backup directory (`0.orig`).
    pub original_file: Option<String>,
    /// The original's permission bits, restored with it.
    #[serde(default)]
    pub original_mode: Option<u32>,
    /// SHA-256 (hex) of the bytes MetaClaw last wrote: if the file still hashes to it, the
    /// user has not touched it and the original can be put back byte for byte.
    pub written_sha256: String,
    /// The key paths MetaClaw set or removed (the keys it owns).
    pub keys: Vec<Vec<String>>,
    /// The base URL MetaClaw pointed the agent at, for `status`.
    #[serde(default)]
    pub base: Option<String>,
    /// RFC 3339, UTC.
    pub backed_up_at: String,
    pub written_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub version: u32,
    pub agent: String,
    pub created_at: String,
    pub updated_at: String,
    pub files: Vec<FileRecord>,
    /// How the last connect connected the agent (proxy or plugin); absent in backups made
    /// before MetaClaw had plugins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
}

/// An agent's backup directory and its manifest.
#[derive(Debug, Clone)]
pub struct Backup {
    dir: PathBuf,
    pub manifest: Manifest,
}

impl Backup {
    /// `<root>/<agent>`.
    pub fn dir_for(root: &Path, agent: &str) -> PathBuf {
        root.join(agent)
    }

    /// The agent's backup, `None` when there is none. A directory without a manifest is a
    /// connect that stopped before recording anything (the config was not written yet),
    /// so it counts as none; a manifest that does not parse is an error, never ignored.
    pub fn load(root: &Path, agent: &str) -> Result<Option<Backup>, ClawError> {
        let dir = Self::dir_for(root, agent);
        let path = dir.join(MANIFEST);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ClawError::io(path, e)),
        };
        let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| ClawError::Backup {
            path: path.clone(),
            detail: format!(
                "the manifest is corrupt ({e}); the originals are still in {}, restore them by hand or remove the directory",
                dir.display()
            ),
        })?;
        if manifest.version != MANIFEST_VERSION {
            return Err(ClawError::Backup {
                path,
                detail: format!(
                    "manifest version {} is not one this MetaClaw understands ({MANIFEST_VERSION})",
                    manifest.version
                ),
            });
        }
        Ok(Some(Backup { dir, manifest }))
    }

    /// A new, empty backup for `agent` (nothing on disk until [`Self::save`]).
    pub fn new(root: &Path, agent: &str) -> Backup {
        let now = now();
        Backup {
            dir: Self::dir_for(root, agent),
            manifest: Manifest {
                version: MANIFEST_VERSION,
                agent: agent.to_owned(),
                created_at: now.clone(),
                updated_at: now,
                files: Vec::new(),
                mode: None,
            },
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn record(&self, path: &Path) -> Option<&FileRecord> {
        self.manifest.files.iter().find(|f| f.path == path)
    }

    /// Records that MetaClaw is about to write `written` to `path`. The first time a path
    /// is seen its original (`None`: it did not exist) is copied beside the manifest;
    /// later calls only update what was written and add to the owned keys.
    pub fn note_write(
        &mut self,
        path: &Path,
        original: Option<(&[u8], Option<u32>)>,
        written: &[u8],
        keys: &[Vec<String>],
        base: &str,
    ) -> Result<(), ClawError> {
        let now = now();
        self.manifest.updated_at = now.clone();
        if let Some(rec) = self.manifest.files.iter_mut().find(|f| f.path == path) {
            rec.written_sha256 = sha256_hex(written);
            rec.written_at = now;
            rec.base = Some(base.to_owned());
            for k in keys {
                if !rec.keys.contains(k) {
                    rec.keys.push(k.clone());
                }
            }
            return Ok(());
        }
        ensure_dir(&self.dir)?;
        let n = self.manifest.files.len();
        let (original_sha256, original_file, original_mode) = match original {
            Some((bytes, mode)) => {
                let name = format!("{n}.orig");
                write_atomic(&self.dir.join(&name), bytes, 0o600)?;
                (Some(sha256_hex(bytes)), Some(name), mode)
            }
            None => (None, None, None),
        };
        self.manifest.files.push(FileRecord {
            path: path.to_owned(),
            existed: original.is_some(),
            original_sha256,
            original_file,
            original_mode,
            written_sha256: sha256_hex(written),
            keys: keys.to_vec(),
            base: Some(base.to_owned()),
            backed_up_at: now.clone(),
            written_at: now,
        });
        Ok(())
    }

    /// Writes the manifest atomically.
    pub fn save(&self) -> Result<(), ClawError> {
        ensure_dir(&self.dir)?;
        let path = self.dir.join(MANIFEST);
        let json = serde_json::to_vec_pretty(&self.manifest).map_err(|e| ClawError::Backup {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        write_atomic(&path, &json, 0o600)
    }

    /// The original bytes of `rec` (`None` when the file did not exist), checked against
    /// the recorded hash so a damaged copy is never restored.
    pub fn original(&self, rec: &FileRecord) -> Result<Option<Vec<u8>>, ClawError> {
        let (Some(name), Some(hash)) = (&rec.original_file, &rec.original_sha256) else {
            if rec.existed {
                return Err(ClawError::Backup {
                    path: self.dir.join(MANIFEST),
                    detail: format!("no copy of the original {} is recorded", rec.path.display()),
                });
            }
            return Ok(None);
        };
        let path = self.dir.join(name);
        let bytes = fs::read(&path).map_err(|e| ClawError::Backup {
            path: path.clone(),
            detail: format!("cannot read the original copy: {e}"),
        })?;
        if &sha256_hex(&bytes) != hash {
            return Err(ClawError::Backup {
                path,
                detail: "the original copy does not match its recorded SHA-256".into(),
            });
        }
        Ok(Some(bytes))
    }

    /// Deletes the backup directory (after a successful disconnect).
    pub fn remove(self) -> Result<(), ClawError> {
        match fs::remove_dir_all(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(ClawError::io(self.dir, e)),
        }
    }
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Creates `dir` (and parents) and makes it 0700: backups hold provider keys.
fn ensure_dir(dir: &Path) -> Result<(), ClawError> {
    fs::create_dir_all(dir).map_err(|e| ClawError::io(dir, e))?;
    set_mode(dir, 0o700)
}

#[cfg(unix)]
pub(crate) fn set_mode(path: &Path, mode: u32) -> Result<(), ClawError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(|e| ClawError::io(path, e))
}

#[cfg(not(unix))]
pub(crate) fn set_mode(_path: &Path, _mode: u32) -> Result<(), ClawError> {
    Ok(())
}

/// The permission bits of `path`, where the platform has them.
#[cfg(unix)]
pub(crate) fn mode_of(meta: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
pub(crate) fn mode_of(_meta: &fs::Metadata) -> Option<u32> {
    None
}

/// Writes `bytes` to `path` so a reader sees the old file or the new one, never half of
/// one, with exactly `mode`.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), ClawError> {
    metaclaw_files::write_atomic(path, bytes, Some(mode)).map_err(|e| ClawError::io(path, e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn sha256_hex_matches_a_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn first_write_keeps_the_original_and_later_ones_do_not_replace_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("agent-backup");
        let file = tmp.path().join("cfg");
        let mut b = Backup::new(&root, "demo");
        let keys = vec![vec!["a".to_owned()]];
        b.note_write(
            &file,
            Some((b"original", Some(0o640))),
            b"one",
            &keys,
            "http://x",
        )
        .unwrap();
        b.save().unwrap();
        let more = vec![vec!["b".to_owned()]];
        b.note_write(
            &file,
            Some((b"one", Some(0o640))),
            b"two",
            &more,
            "http://x",
        )
        .unwrap();
        b.save().unwrap();

        let loaded = Backup::load(&root, "demo").unwrap().unwrap();
        let rec = loaded.record(&file).unwrap();
        assert_eq!(rec.written_sha256, sha256_hex(b"two"));
        assert_eq!(rec.keys, vec![vec!["a".to_owned()], vec!["b".to_owned()]]);
        assert_eq!(rec.original_mode, Some(0o640));
        assert_eq!(loaded.original(rec).unwrap().unwrap(), b"original");
    }

    #[cfg(unix)]
    #[test]
    fn directory_is_0700_and_files_0600() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("agent-backup");
        let mut b = Backup::new(&root, "demo");
        b.note_write(
            &tmp.path().join("cfg"),
            Some((b"k=v", None)),
            b"x",
            &[],
            "b",
        )
        .unwrap();
        b.save().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(b.dir()), 0o700);
        assert_eq!(mode(&b.dir().join("0.orig")), 0o600);
        assert_eq!(mode(&b.dir().join(MANIFEST)), 0o600);
    }

    #[test]
    fn a_corrupt_manifest_is_an_error_not_a_missing_backup() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("demo");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(MANIFEST), b"{ not json").unwrap();
        match Backup::load(tmp.path(), "demo") {
            Err(ClawError::Backup { detail, .. }) => assert!(detail.contains("corrupt")),
            other => panic!("expected a backup error, got {other:?}"),
        }
    }

    #[test]
    fn a_damaged_original_copy_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let mut b = Backup::new(tmp.path(), "demo");
        let file = tmp.path().join("cfg");
        b.note_write(&file, Some((b"orig", None)), b"x", &[], "b")
            .unwrap();
        b.save().unwrap();
        fs::write(b.dir().join("0.orig"), b"tampered").unwrap();
        let rec = b.record(&file).unwrap().clone();
        assert!(matches!(b.original(&rec), Err(ClawError::Backup { .. })));
    }

    #[test]
    fn no_directory_means_no_backup() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(Backup::load(tmp.path(), "demo").unwrap().is_none());
    }
}
