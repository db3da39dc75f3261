#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::time::Duration;

use metaclaw_skills::{Library, SharedLibrary, watch};
use tokio::sync::watch::Receiver;
use tokio::time::{Instant, timeout_at};

const WAIT: Duration = Duration::from_secs(20);

fn put(dir: &Path, name: &str, body: &str) {
    fs::create_dir_all(dir.join(name)).unwrap();
    let text = format!("---\nname: {name}\ndescription: about {name}\n---\n{body}\n");
    fs::write(dir.join(name).join("SKILL.md"), text).unwrap();
}

/// Waits on reload notifications (never a fixed sleep) until `done` holds.
async fn wait_for(
    lib: &SharedLibrary,
    rx: &mut Receiver<u64>,
    what: &str,
    done: impl Fn(&Library) -> bool,
) {
    let deadline = Instant::now() + WAIT;
    while !done(&lib.current()) {
        if !matches!(timeout_at(deadline, rx.changed()).await, Ok(Ok(()))) {
            panic!("no reload showing {what} within {WAIT:?}");
        }
    }
}

#[tokio::test]
async fn add_modify_remove_are_reflected() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    put(&dir, "first", "one");
    let (lib, guard) = watch(std::slice::from_ref(&dir), Duration::from_millis(50)).unwrap();
    let mut rx = lib.subscribe();
    assert_eq!(lib.current().len(), 1);
    let before = lib.current();

    put(&dir, "second", "two");
    wait_for(&lib, &mut rx, "the added skill", |l| {
        l.get("second").is_some()
    })
    .await;

    put(&dir, "second", "changed");
    wait_for(&lib, &mut rx, "the modified body", |l| {
        l.get("second").is_some_and(|s| s.body == "changed")
    })
    .await;

    fs::remove_dir_all(dir.join("first")).unwrap();
    wait_for(&lib, &mut rx, "the removal", |l| l.get("first").is_none()).await;

    // A snapshot taken earlier is unaffected by the swaps.
    assert_eq!(before.len(), 1);
    assert!(before.get("first").is_some());

    // Dropping the guard ends the watcher thread, which closes the notification channel.
    drop(guard);
    let deadline = Instant::now() + WAIT;
    loop {
        match timeout_at(deadline, rx.changed()).await {
            Ok(Err(_)) => break,
            Ok(Ok(())) => {}
            Err(_) => panic!("watcher still running after the guard was dropped"),
        }
    }
}

#[tokio::test]
async fn broken_file_is_reported_and_the_rest_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    put(&dir, "good", "ok");
    let (lib, _guard) = watch(std::slice::from_ref(&dir), Duration::from_millis(50)).unwrap();
    let mut rx = lib.subscribe();

    fs::create_dir_all(dir.join("bad")).unwrap();
    fs::write(dir.join("bad/SKILL.md"), "---\nname: [\n---\n").unwrap();
    wait_for(&lib, &mut rx, "the broken file's error", |l| {
        l.errors.len() == 1
    })
    .await;
    assert_eq!(lib.current().len(), 1);
}

#[tokio::test]
async fn reading_the_files_is_not_a_change() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    put(&dir, "first", "one");
    let (lib, _guard) = watch(std::slice::from_ref(&dir), Duration::from_millis(50)).unwrap();
    let mut rx = lib.subscribe();
    // Other readers (the CLI, an editor, our own reloads) open and close the files.
    for _ in 0..5 {
        assert_eq!(Library::load(std::slice::from_ref(&dir)).len(), 1);
    }
    // Written whole (temp file + rename), as editors do, so one change is one change.
    let text = "---\nname: first\ndescription: about first\n---\nedited\n";
    fs::write(dir.join("first/.SKILL.md.tmp"), text).unwrap();
    fs::rename(dir.join("first/.SKILL.md.tmp"), dir.join("first/SKILL.md")).unwrap();
    wait_for(&lib, &mut rx, "the edit", |l| {
        l.get("first").is_some_and(|s| s.body == "edited")
    })
    .await;
    assert_eq!(*rx.borrow(), 1, "one content change, one notification");
}
