//! Update checks through the public surface: `metaclaw_updates::check` against a signed apt
//! repository served here (keys made with gpg), a version manifest; then the binary — a daemon
//! whose status names the newer version, `metaclaw update check` through it and without it,
//! and the restart it offers once its program file is replaced.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::daemon::{Home, free_port, stdout};
use metaclaw_e2e::fake_apt::{FakeApt, Key, repository, sources_file};
use metaclaw_updates::{Sources, check, version};
use serde_json::Value;

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

#[tokio::test]
async fn a_newer_package_in_the_signed_repository_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let key = Key::new(dir.path(), "release").unwrap();
    let keyring = key.keyring.clone();
    let apt = FakeApt::start().await.unwrap();
    let uri = apt.url.clone();
    let current = version::current().to_owned();
    let newer = format!("{current}+1");
    apt.serve(repository(&key, "stable", &[&current, &newer, "0.0.1"]).unwrap());
    let s = Sources {
        apt_sources: sources_file(dir.path(), &uri, "stable", &keyring).unwrap(),
        manifest_url: Some("http://127.0.0.1:9/never-asked".into()),
    };
    let o = check(&client(), &s).await;
    assert_eq!(o.error, None);
    assert_eq!(o.source, "apt");
    assert_eq!(o.available.as_deref(), Some(newer.as_str()));
    assert_eq!(o.from, Some(format!("{uri} (stable)")));
    assert!(o.apply.unwrap().contains("apt upgrade metaclaw"));

    // The same version only: nothing to update.
    apt.serve(repository(&key, "stable", &[&current]).unwrap());
    let o = check(&client(), &s).await;
    assert_eq!(
        (o.error, o.available, o.newest),
        (None, None, Some(current.clone()))
    );

    // The beta channel is its own suite; stable's signed index cannot stand in for it.
    let mut both = repository(&key, "beta", &[&format!("{current}+2~beta1")]).unwrap();
    both.extend(repository(&key, "stable", &[&newer]).unwrap());
    apt.serve(both);
    let beta = Sources {
        apt_sources: sources_file(dir.path(), &uri, "beta", &keyring).unwrap(),
        manifest_url: None,
    };
    let o = check(&client(), &beta).await;
    assert_eq!(o.available, Some(format!("{current}+2~beta1")));
    let mut swapped = repository(&key, "stable", &[&newer]).unwrap();
    for (p, _) in &mut swapped {
        *p = p.replace("/stable/", "/beta/");
    }
    apt.serve(swapped);
    let o = check(&client(), &beta).await;
    assert_eq!(o.available, None);
    assert!(o.error.unwrap().contains("not for the channel beta"));
}

#[tokio::test]
async fn a_repository_signed_with_another_key_or_altered_offers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let keyring = Key::new(dir.path(), "release").unwrap().keyring;
    let other = Key::new(dir.path(), "other").unwrap();
    let apt = FakeApt::start().await.unwrap();
    let uri = apt.url.clone();
    let newer = format!("{}+1", version::current());
    let s = Sources {
        apt_sources: sources_file(dir.path(), &uri, "stable", &keyring).unwrap(),
        manifest_url: None,
    };

    apt.serve(repository(&other, "stable", &[&newer]).unwrap());
    let o = check(&client(), &s).await;
    assert_eq!(o.available, None);
    let error = o.error.unwrap();
    assert!(error.contains("does not verify"), "{error}");

    // Signed by the right key, then the index changed: its digest no longer matches.
    let key = Key::new(dir.path(), "release2").unwrap();
    let keyring2 = key.keyring.clone();
    let mut repo = repository(&key, "stable", &[&newer]).unwrap();
    let index = String::from_utf8(repo[1].1.clone()).unwrap();
    repo[1].1 = index
        .replacen("Version: ", "Version: 9", 1)
        .replacen("\n\n", "\n", 1)
        .into_bytes();
    apt.serve(repo);
    let s2 = Sources {
        apt_sources: sources_file(dir.path(), &uri, "stable", &keyring2).unwrap(),
        manifest_url: None,
    };
    let o = check(&client(), &s2).await;
    assert_eq!(o.available, None);
    assert!(
        o.error
            .unwrap()
            .contains("does not match the signed Release")
    );

    // The signed text altered after signing.
    let mut repo = repository(&key, "stable", &[&newer]).unwrap();
    let text = String::from_utf8(repo[0].1.clone()).unwrap();
    repo[0].1 = text
        .replace("Origin: MetaClaw", "Origin: Someone")
        .into_bytes();
    apt.serve(repo);
    let o = check(&client(), &s2).await;
    assert_eq!(o.available, None);
    assert!(o.error.unwrap().contains("does not verify"));

    // Unreachable.
    let s3 = Sources {
        apt_sources: sources_file(dir.path(), "http://127.0.0.1:9", "stable", &keyring2).unwrap(),
        manifest_url: None,
    };
    let o = check(&client(), &s3).await;
    assert_eq!(o.available, None);
    assert!(
        o.error
            .unwrap()
            .contains("cannot fetch http://127.0.0.1:9/dists/stable/InRelease")
    );
}

#[tokio::test]
async fn a_build_from_source_reads_the_manifest_and_without_one_checks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let apt = FakeApt::start().await.unwrap();
    let uri = apt.url.clone();
    let newer = format!("{}+1", version::current());
    apt.serve(vec![
        (
            "latest.json".into(),
            format!("{{\"version\": \"{newer}\"}}").into_bytes(),
        ),
        ("bad.json".into(), b"{\"version\": \"<html>\"}".to_vec()),
    ]);
    let none = dir.path().join("absent.sources");
    let s = Sources {
        apt_sources: none.clone(),
        manifest_url: Some(format!("{uri}/latest.json")),
    };
    let o = check(&client(), &s).await;
    assert_eq!(
        (o.source, o.available.as_deref()),
        ("manifest", Some(newer.as_str()))
    );
    assert_eq!(o.apply, Some(metaclaw_updates::APPLY_SOURCE));

    let bad = Sources {
        apt_sources: none.clone(),
        manifest_url: Some(format!("{uri}/bad.json")),
    };
    let o = check(&client(), &bad).await;
    assert_eq!(o.available, None);
    assert!(o.error.unwrap().contains("is not a version"));

    let nothing = Sources {
        apt_sources: none,
        manifest_url: None,
    };
    let o = check(&client(), &nothing).await;
    assert_eq!((o.source, o.available, o.error), ("none", None, None));
}

/// A daemon in its own home reading the apt source at `sources`, with `updates` as its
/// `updates:` section.
struct Daemon {
    home: Home,
    port: u16,
    sources: std::path::PathBuf,
}

impl Daemon {
    async fn start(sources: &Path, updates: &str) -> Daemon {
        let port = free_port();
        let home = Home::new(&format!(
            "proxy:\n  port: {port}\nskills:\n  enabled: false\nmemory:\n  enabled: false\n{updates}"
        ));
        let d = Daemon {
            home,
            port,
            sources: sources.to_owned(),
        };
        let o = d.run(&["start", "--daemon"]);
        assert!(o.status.success(), "{o:?}");
        d
    }

    fn cmd(&self, args: &[&str]) -> std::process::Command {
        let mut c = self.home.cmd("file", args);
        c.env("METACLAW_APT_SOURCES", &self.sources);
        c
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        self.cmd(args).output().unwrap()
    }

    async fn status(&self) -> Value {
        self.home.admin_get(self.port, "/api/status").await
    }

    /// `/api/status` once `ok` holds for it (bounded).
    async fn status_until(&self, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let s = self.status().await;
            if ok(&s) {
                return s;
            }
            assert!(Instant::now() < end, "timed out waiting for {what}: {s}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_daemon_tells_of_a_newer_version_and_never_of_one_signed_by_another_key() {
    let dir = tempfile::tempdir().unwrap();
    let key = Key::new(dir.path(), "release").unwrap();
    let other = Key::new(dir.path(), "other").unwrap();
    let apt = FakeApt::start().await.unwrap();
    let current = version::current().to_owned();
    let newer = format!("{current}+1");
    apt.serve(repository(&key, "stable", &[&current, &newer]).unwrap());
    let sources = sources_file(dir.path(), &apt.url, "stable", &key.keyring).unwrap();

    // Checked at start (updates.check defaults to daily).
    let d = Daemon::start(&sources, "").await;
    let s = d
        .status_until("the newer version", |s| !s["update"]["available"].is_null())
        .await;
    assert_eq!(s["update"]["available"], newer.as_str());
    assert_eq!(s["update"]["source"], "apt");
    assert_eq!(s["update"]["check"], "daily");
    let text = stdout(&d.run(&["status"]));
    assert!(
        text.contains(&format!(
            "update:     MetaClaw {newer} is available (running {current}); to install it: your system's updater, or: sudo apt update && sudo apt upgrade metaclaw"
        )),
        "{text}"
    );

    // The same repository signed with another key: no update, and why.
    apt.serve(repository(&other, "stable", &[&format!("{current}+9")]).unwrap());
    let o = d.run(&["update", "check", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["available"].is_null(), "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("does not verify"),
        "{v}"
    );
    // Through the engine: its status says the same now.
    let s = d.status().await;
    assert!(s["update"]["available"].is_null(), "{s}");
    let text = stdout(&d.run(&["status"]));
    assert!(
        text.contains(
            "update:     could not look for updates: the repository's signature does not verify"
        ),
        "{text}"
    );

    // Signed by the right key again: found again.
    apt.serve(repository(&key, "stable", &[&newer]).unwrap());
    let o = d.run(&["update", "check"]);
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).starts_with(&format!("MetaClaw {newer} is available")),
        "{o:?}"
    );
    let o = d.run(&["stop"]);
    assert!(o.status.success(), "{o:?}");

    // Not running: `update check` looks by itself.
    let o = d.run(&["update", "check", "--json"]);
    assert!(o.status.success(), "{o:?}");
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["available"], newer.as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn never_means_no_look_until_asked() {
    let dir = tempfile::tempdir().unwrap();
    let key = Key::new(dir.path(), "release").unwrap();
    let apt = FakeApt::start().await.unwrap();
    let newer = format!("{}+1", version::current());
    apt.serve(repository(&key, "stable", &[&newer]).unwrap());
    let sources = sources_file(dir.path(), &apt.url, "stable", &key.keyring).unwrap();
    let d = Daemon::start(&sources, "updates:\n  check: never\n").await;
    let s = d.status().await;
    assert_eq!(s["update"]["check"], "never");
    assert!(s["update"]["checked_at_ms"].is_null(), "{s}");
    assert!(
        stdout(&d.run(&["status"])).contains("update:     not looked for (updates.check: never)")
    );
    // Asked: it looks.
    let o = d.run(&["update", "check", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["available"], newer.as_str(), "{o:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replaced_program_file_is_offered_as_a_restart() {
    // The daemon runs from a copy of the binary, which is then replaced as dpkg replaces a
    // file: written beside it, renamed over it. The new file says it is another version.
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let exe = bin_dir.join("metaclaw");
    std::fs::copy(common::daemon::bin(), &exe).unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "proxy:\n  port: {port}\nskills:\n  enabled: false\nmemory:\n  enabled: false\n"
    ));
    let mut start = home.cmd("file", &["start", "--daemon"]);
    start.env("METACLAW_APT_SOURCES", dir.path().join("none.sources"));
    let start = std::process::Command::new(&exe)
        .args(start.get_args())
        .envs(start.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .output()
        .unwrap();
    assert!(start.status.success(), "{start:?}");
    let d = Daemon {
        home,
        port,
        sources: dir.path().join("none.sources"),
    };
    let s = d.status().await;
    assert!(s["update"]["restart_to"].is_null(), "{s}");

    let new = bin_dir.join("metaclaw.dpkg-new");
    std::fs::write(&new, "#!/bin/sh\necho 'metaclaw 9.9.9'\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::rename(&new, &exe).unwrap();
    let s = d
        .status_until("the restart offer", |s| {
            !s["update"]["restart_to"].is_null()
        })
        .await;
    assert_eq!(s["update"]["restart_to"], "9.9.9");
    let text = stdout(&d.run(&["status"]));
    assert!(
        text.contains(&format!(
            "update:     MetaClaw 9.9.9 is installed (running {}): restart MetaClaw to use it",
            version::current()
        )),
        "{text}"
    );
}
