#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs;
use std::path::{Path, PathBuf};

use metaclaw_skills::{Library, SkillError};

fn put(dir: &Path, folder: &str, name: &str, body: &str) {
    fs::create_dir_all(dir.join(folder)).unwrap();
    let text = format!("---\nname: {name}\ndescription: about {name}\n---\n{body}\n");
    fs::write(dir.join(folder).join("SKILL.md"), text).unwrap();
}

fn names(lib: &Library) -> Vec<&str> {
    lib.skills.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn later_dirs_override_earlier_ones() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    put(a.path(), "zeta", "zeta", "from a");
    put(a.path(), "alpha", "alpha", "from a");
    put(b.path(), "alpha", "alpha", "from b");
    let missing = a.path().join("missing");
    let dirs = [a.path().to_path_buf(), b.path().to_path_buf(), missing];
    let lib = Library::load(&dirs);
    assert!(lib.errors.is_empty(), "{:?}", lib.errors);
    assert_eq!(names(&lib), ["alpha", "zeta"]);
    assert_eq!(lib.get("alpha").unwrap().body, "from b");
    assert_eq!(lib.get("zeta").unwrap().body, "from a");
    assert!(lib.get("beta").is_none());

    let reversed = Library::load(&[b.path().to_path_buf(), a.path().to_path_buf()]);
    assert_eq!(reversed.get("alpha").unwrap().body, "from a");
    assert_ne!(lib.fingerprint(), reversed.fingerprint());
    assert_eq!(lib.fingerprint(), Library::load(&dirs[..2]).fingerprint());
}

#[test]
fn duplicate_name_in_one_dir_is_an_error_for_the_second() {
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "a-first", "same", "first");
    put(d.path(), "b-second", "same", "second");
    let lib = Library::load(&[d.path().to_path_buf()]);
    assert_eq!(lib.len(), 1);
    assert_eq!(lib.get("same").unwrap().body, "first");
    assert_eq!(lib.errors.len(), 1);
    let e = lib.errors[0].to_string();
    assert!(
        e.contains("b-second") && e.contains("duplicate skill name `same`"),
        "{e}"
    );
}

#[test]
fn broken_file_is_skipped_and_the_rest_loads() {
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "good", "good", "ok");
    put(d.path(), "bad", "Bad Name", "x");
    // Ignored: dot-folders, loose files, nested skills, other file names.
    put(d.path(), ".hidden", "hidden", "x");
    put(&d.path().join("good"), "nested", "nested", "x");
    fs::write(d.path().join("README.md"), "---\nname: readme\n---\n").unwrap();
    fs::create_dir_all(d.path().join("other")).unwrap();
    fs::write(d.path().join("other/skill.md"), "x").unwrap();

    let lib = Library::load(&[d.path().to_path_buf()]);
    assert_eq!(names(&lib), ["good"]);
    assert_eq!(lib.errors.len(), 1);
    let e = &lib.errors[0];
    assert!(
        matches!(e, SkillError::Invalid { line: Some(2), .. }),
        "{e:?}"
    );
    assert_eq!(e.path(), Some(d.path().join("bad/SKILL.md").as_path()));
}

#[test]
fn enabled_skips_disabled_skills() {
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "on", "on", "x");
    fs::create_dir_all(d.path().join("off")).unwrap();
    let off = "---\nname: off\ndescription: d\ndisabled: true\n---\n";
    fs::write(d.path().join("off/SKILL.md"), off).unwrap();
    let lib = Library::load(&[PathBuf::from(d.path())]);
    assert_eq!(lib.len(), 2);
    let enabled: Vec<_> = lib.enabled().map(|s| s.name.as_str()).collect();
    assert_eq!(enabled, ["on"]);
}
