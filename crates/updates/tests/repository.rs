//! Update checks against a real signed apt repository (keys made with gpg, served over HTTP
//! from this process), and against a version manifest; the ordering against dpkg's own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::routing::get;
use metaclaw_updates::{Sources, check, this_arch, version};
use sha2::{Digest, Sha256};

/// Files served by path.
type Files = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

async fn serve(files: Files) -> String {
    async fn file(
        State(files): State<Files>,
        UrlPath(path): UrlPath<String>,
    ) -> Result<Vec<u8>, StatusCode> {
        files
            .lock()
            .unwrap()
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, b)| b.clone())
            .ok_or(StatusCode::NOT_FOUND)
    }
    let app = Router::new().route("/{*path}", get(file)).with_state(files);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// A throwaway signing key: (gnupg home, exported public keyring).
fn key(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let home = dir.join(format!("gnupg-{name}"));
    std::fs::create_dir_all(&home).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let gpg = |args: &[&str]| {
        let out = Command::new("gpg")
            .env("GNUPGHOME", &home)
            .args([
                "--batch",
                "--quiet",
                "--pinentry-mode",
                "loopback",
                "--passphrase",
                "",
            ])
            .args(args)
            .output()
            .expect("gpg is required (scripts/deps.sh installs it)");
        assert!(
            out.status.success(),
            "gpg {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    gpg(&[
        "--quick-gen-key",
        &format!("{name} <{name}@example.org>"),
        "ed25519",
        "sign",
        "never",
    ]);
    let keyring = dir.join(format!("{name}.gpg"));
    std::fs::write(&keyring, gpg(&["--export"])).unwrap();
    (home, keyring)
}

fn clearsign(home: &Path, text: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("Release");
    std::fs::write(&release, text).unwrap();
    let out = Command::new("gpg")
        .env("GNUPGHOME", home)
        .args([
            "--batch",
            "--quiet",
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
        ])
        .args(["--clearsign", "-o", "-"])
        .arg(&release)
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A repository's files for `suite` holding `versions` of metaclaw, signed by `home`.
fn repository(home: &Path, suite: &str, versions: &[&str]) -> Vec<(String, Vec<u8>)> {
    let arch = this_arch();
    let packages: String = versions
        .iter()
        .map(|v| {
            format!(
                "Package: metaclaw\nVersion: {v}\nArchitecture: {arch}\nFilename: pool/main/m/metaclaw/metaclaw_{v}_{arch}.deb\nDescription: Makes your AI agent learn from real use\n\n"
            )
        })
        .collect();
    let path = format!("main/binary-{arch}/Packages");
    let release = format!(
        "Origin: MetaClaw\nSuite: {suite}\nCodename: {suite}\nComponents: main\nArchitectures: {arch}\nSHA256:\n {} {} {path}\n",
        hex(packages.as_bytes()),
        packages.len()
    );
    vec![
        (
            format!("dists/{suite}/InRelease"),
            clearsign(home, &release),
        ),
        (format!("dists/{suite}/{path}"), packages.into_bytes()),
    ]
}

fn sources(dir: &Path, uri: &str, suite: &str, keyring: &Path) -> PathBuf {
    let path = dir.join("metaclaw.sources");
    std::fs::write(
        &path,
        format!(
            "Types: deb\nURIs: {uri}\nSuites: {suite}\nComponents: main\nSigned-By: {}\n",
            keyring.display()
        ),
    )
    .unwrap();
    path
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

#[tokio::test]
async fn a_newer_package_in_the_signed_repository_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (home, keyring) = key(dir.path(), "release");
    let files: Files = Arc::default();
    let uri = serve(files.clone()).await;
    let current = version::current().to_owned();
    let newer = format!("{current}+1");
    *files.lock().unwrap() = repository(&home, "stable", &[&current, &newer, "0.0.1"]);
    let s = Sources {
        apt_sources: sources(dir.path(), &uri, "stable", &keyring),
        manifest_url: Some("http://127.0.0.1:9/never-asked".into()),
    };
    let o = check(&client(), &s).await;
    assert_eq!(o.error, None);
    assert_eq!(o.source, "apt");
    assert_eq!(o.available.as_deref(), Some(newer.as_str()));
    assert_eq!(o.from, Some(format!("{uri} (stable)")));
    assert!(o.apply.unwrap().contains("apt upgrade metaclaw"));

    // The same version only: nothing to update.
    *files.lock().unwrap() = repository(&home, "stable", &[&current]);
    let o = check(&client(), &s).await;
    assert_eq!(
        (o.error, o.available, o.newest),
        (None, None, Some(current.clone()))
    );

    // The beta channel is its own suite; stable's signed index cannot stand in for it.
    let mut both = repository(&home, "beta", &[&format!("{current}+2~beta1")]);
    both.extend(repository(&home, "stable", &[&newer]));
    *files.lock().unwrap() = both;
    let beta = Sources {
        apt_sources: sources(dir.path(), &uri, "beta", &keyring),
        manifest_url: None,
    };
    let o = check(&client(), &beta).await;
    assert_eq!(o.available, Some(format!("{current}+2~beta1")));
    let mut swapped = repository(&home, "stable", &[&newer]);
    for (p, _) in &mut swapped {
        *p = p.replace("/stable/", "/beta/");
    }
    *files.lock().unwrap() = swapped;
    let o = check(&client(), &beta).await;
    assert_eq!(o.available, None);
    assert!(o.error.unwrap().contains("not for the channel beta"));
}

#[tokio::test]
async fn a_repository_signed_with_another_key_or_altered_offers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (_, keyring) = key(dir.path(), "release");
    let (other, _) = key(dir.path(), "other");
    let files: Files = Arc::default();
    let uri = serve(files.clone()).await;
    let newer = format!("{}+1", version::current());
    let s = Sources {
        apt_sources: sources(dir.path(), &uri, "stable", &keyring),
        manifest_url: None,
    };

    *files.lock().unwrap() = repository(&other, "stable", &[&newer]);
    let o = check(&client(), &s).await;
    assert_eq!(o.available, None);
    let error = o.error.unwrap();
    assert!(error.contains("does not verify"), "{error}");

    // Signed by the right key, then the index changed: its digest no longer matches.
    let (home, keyring2) = key(dir.path(), "release2");
    let mut repo = repository(&home, "stable", &[&newer]);
    let index = String::from_utf8(repo[1].1.clone()).unwrap();
    repo[1].1 = index
        .replacen("Version: ", "Version: 9", 1)
        .replacen("\n\n", "\n", 1)
        .into_bytes();
    *files.lock().unwrap() = repo;
    let s2 = Sources {
        apt_sources: sources(dir.path(), &uri, "stable", &keyring2),
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
    let mut repo = repository(&home, "stable", &[&newer]);
    let text = String::from_utf8(repo[0].1.clone()).unwrap();
    repo[0].1 = text
        .replace("Origin: MetaClaw", "Origin: Someone")
        .into_bytes();
    *files.lock().unwrap() = repo;
    let o = check(&client(), &s2).await;
    assert_eq!(o.available, None);
    assert!(o.error.unwrap().contains("does not verify"));

    // Unreachable.
    let s3 = Sources {
        apt_sources: sources(dir.path(), "http://127.0.0.1:9", "stable", &keyring2),
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
    let files: Files = Arc::default();
    let uri = serve(files.clone()).await;
    let newer = format!("{}+1", version::current());
    *files.lock().unwrap() = vec![
        (
            "latest.json".into(),
            format!("{{\"version\": \"{newer}\"}}").into_bytes(),
        ),
        ("bad.json".into(), b"{\"version\": \"<html>\"}".to_vec()),
    ];
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
