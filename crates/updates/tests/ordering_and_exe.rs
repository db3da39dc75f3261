//! dpkg's version ordering against dpkg itself, and a program file replaced as dpkg does.
//! (The repository checks run against a signed repository in tests/tests/updates.rs.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use metaclaw_updates::version;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn orders_versions_as_dpkg_does(
        a in "([0-9]:)?[0-9]{1,2}(\\.[0-9a-z~+]{1,3}){0,3}(-[0-9a-z~.]{1,3})?",
        b in "([0-9]:)?[0-9]{1,2}(\\.[0-9a-z~+]{1,3}){0,3}(-[0-9a-z~.]{1,3})?",
    ) {
        let dpkg = |op: &str| Command::new("dpkg").args(["--compare-versions", &a, op, &b]).status().unwrap().success();
        let want = if dpkg("lt") { std::cmp::Ordering::Less } else if dpkg("gt") { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Equal };
        proptest::prop_assert_eq!(version::compare(&a, &b), want, "{} vs {}", a, b);
    }
}

#[tokio::test]
async fn a_replaced_program_file_is_seen_with_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("metaclaw");
    std::fs::write(&exe, "#!/bin/sh\necho 'metaclaw 0.1.0'\n").unwrap();
    set_exec(&exe);
    let watch = metaclaw_updates::ExeWatch::of(exe.clone());
    assert!(!watch.changed());
    assert_eq!(watch.version_on_disk().await.as_deref(), Some("0.1.0"));
    // As dpkg does: the new file is written beside the old one and renamed over it.
    let new = dir.path().join("metaclaw.dpkg-new");
    std::fs::write(&new, "#!/bin/sh\necho 'metaclaw 0.2.0'\n").unwrap();
    set_exec(&new);
    std::fs::rename(&new, &exe).unwrap();
    assert!(watch.changed());
    assert_eq!(watch.version_on_disk().await.as_deref(), Some("0.2.0"));
    std::fs::remove_file(&exe).unwrap();
    assert!(
        !watch.changed(),
        "a file missing mid-upgrade is not a change yet"
    );
}

fn set_exec(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
