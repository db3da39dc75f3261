//! The pause survives restarts: its file round-trips, is private, and is never silently
//! dropped when corrupt.
#![allow(clippy::unwrap_used, clippy::panic)]

mod support;

use metaclaw_schedule::ScheduleError;
use metaclaw_schedule::pause::{Pause, PauseFile};
use support::ts;

#[test]
fn missing_file_means_no_pause() {
    let dir = tempfile::tempdir().unwrap();
    let file = PauseFile::new(dir.path().join("pause.json"));
    assert_eq!(file.load().unwrap(), None);
    file.clear().unwrap();
}

#[test]
fn round_trip_and_clear() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("pause.json");
    let file = PauseFile::new(&path);
    let until = Pause {
        since: ts("2026-12-03T17:00:00Z"),
        until: Some(ts("2026-12-03T18:00:00Z")),
    };
    file.save(&until).unwrap();
    assert_eq!(file.load().unwrap(), Some(until));
    let open_ended = Pause {
        since: ts("2026-12-03T17:00:00Z"),
        until: None,
    };
    file.save(&open_ended).unwrap();
    assert_eq!(file.load().unwrap(), Some(open_ended));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("\"since\": \"2026-12-03T17:00:00Z\""),
        "{text}"
    );
    // Only the pause file is left behind: the temporary file was renamed over it.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("pause.json")]);
    file.clear().unwrap();
    assert!(!path.exists());
    assert_eq!(file.load().unwrap(), None);
}

#[cfg(unix)]
#[test]
fn the_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pause.json");
    let file = PauseFile::new(&path);
    file.save(&Pause {
        since: ts("2026-12-03T17:00:00Z"),
        until: None,
    })
    .unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_corrupt_file_is_an_error_naming_it_and_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pause.json");
    std::fs::write(&path, "{\"since\": \"yesterday\"").unwrap();
    let err = PauseFile::new(&path).load().unwrap_err();
    assert!(matches!(err, ScheduleError::PauseCorrupt { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
    assert!(path.exists(), "never deleted");
}

#[test]
fn an_expired_pause_is_not_active() {
    let pause = Pause {
        since: ts("2026-12-03T17:00:00Z"),
        until: Some(ts("2026-12-03T18:00:00Z")),
    };
    assert!(pause.is_active(ts("2026-12-03T17:59:59Z")));
    assert!(!pause.is_active(ts("2026-12-03T18:00:00Z")));
    let forever = Pause {
        since: ts("2026-12-03T17:00:00Z"),
        until: None,
    };
    assert!(forever.is_active(ts("2030-01-01T00:00:00Z")));
}
