//! The engine's calendar glue against the fake Google: the token in the secret store
//! (file backend here), the one-time import of the legacy token file, and `start_with`
//! deciding whether meetings can open windows.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use metaclaw_e2e::fake_google::{self, FakeGoogle};
use metaclaw_engine::calendar::{self as cal, KeychainTokens, TOKEN_ACCOUNT};
use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::secrets::{BackendChoice, SecretStore};
use metaclaw_engine::supervise::Supervisor;
use metaclaw_schedule::calendar::{self, Present, StoredToken, TokenStore};
use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::source::{Reading, Source};
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Home {
    _dir: tempfile::TempDir,
    paths: Paths,
    store: SecretStore,
}

fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::new(dir.path().join("home")).unwrap();
    paths.ensure_dirs().unwrap();
    let store = SecretStore::new(&paths, BackendChoice::File);
    Home {
        _dir: dir,
        paths,
        store,
    }
}

fn config(enabled: bool, credentials: &str, token_path: &str) -> Config {
    let mut c = Config::default();
    c.scheduler.calendar.enabled = enabled;
    c.scheduler.calendar.credentials_path = credentials.to_owned();
    c.scheduler.calendar.token_path = token_path.to_owned();
    c
}

/// Connects with the fake (the test plays the browser) and returns the token it stored.
async fn connect(fake: &FakeGoogle, secrets: &std::path::Path, tokens: Arc<dyn TokenStore>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let present = Present::Show(Arc::new(move |url: &str| {
        let _ = tx.send(url.to_owned());
    }));
    let endpoints = calendar::Endpoints::with_root(&fake.root_url());
    let secrets = secrets.to_path_buf();
    let flow = tokio::spawn(async move {
        calendar::connect(
            &secrets,
            tokens,
            &endpoints,
            vec!["primary".into()],
            present,
        )
        .await
    });
    let url = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .unwrap()
        .unwrap();
    let page = reqwest::get(&url).await.unwrap();
    assert!(page.status().is_success());
    tokio::time::timeout(Duration::from_secs(10), flow)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

async fn wait_open(source: &dyn Source) -> Reading {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r = source.read(Timestamp::now());
        if matches!(r, Reading::Open { .. }) {
            return r;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never open; last reading {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn meeting_now() -> serde_json::Value {
    let now = Timestamp::from_second(Timestamp::now().as_second()).unwrap();
    json!({
        "summary": "Review",
        "start": {"dateTime": now.checked_sub(SignedDuration::from_mins(5)).unwrap().to_string()},
        "end": {"dateTime": now.checked_add(SignedDuration::from_mins(30)).unwrap().to_string()},
    })
}

#[test]
fn keychain_tokens_round_trip_through_the_secret_store() {
    let h = home();
    let tokens = KeychainTokens::new(h.store.clone());
    assert_eq!(tokens.load().unwrap(), None);
    tokens.save(r#"{"refresh_token":"r"}"#).unwrap();
    assert_eq!(
        tokens.load().unwrap().as_deref(),
        Some(r#"{"refresh_token":"r"}"#)
    );
    assert!(
        h.store.get(TOKEN_ACCOUNT).unwrap().is_some(),
        "stored under {TOKEN_ACCOUNT}"
    );
    assert!(cal::is_connected(&h.store).unwrap());
    assert!(cal::disconnect(&h.store).unwrap());
    assert_eq!(tokens.load().unwrap(), None);
    assert!(!cal::disconnect(&h.store).unwrap());
}

#[tokio::test]
async fn start_says_why_the_calendar_is_not_read() {
    let h = home();
    let tokens: Arc<dyn TokenStore> = Arc::new(KeychainTokens::new(h.store.clone()));
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let endpoints = calendar::Endpoints::with_root("http://127.0.0.1:9/");
    let start = |c: &Config| {
        cal::start_with(
            c,
            &h.paths,
            tokens.clone(),
            &endpoints,
            clock.clone(),
            &Supervisor::detached(),
        )
        .map(|_| ())
    };
    let off = start(&config(false, "", "")).unwrap_err();
    assert!(off.contains("scheduler.calendar.enabled is off"), "{off}");
    let no_secrets = start(&config(true, "", "")).unwrap_err();
    assert!(
        no_secrets.contains("credentials_path is not set"),
        "{no_secrets}"
    );
    let missing = start(&config(true, "/nonexistent/client_secrets.json", "")).unwrap_err();
    assert!(
        missing.contains("cannot read the Google client secrets"),
        "{missing}"
    );

    std::fs::write(h.paths.home.join("secrets.json"), r#"{"installed":{"client_id":"x","client_secret":"s","auth_uri":"http://127.0.0.1:9/a","token_uri":"http://127.0.0.1:9/t","redirect_uris":["http://localhost"]}}"#).unwrap();
    // A relative path is under MetaClaw's home.
    let not_connected = start(&config(true, "secrets.json", "")).unwrap_err();
    assert!(not_connected.contains("not connected"), "{not_connected}");
    // The public entry point answers None for the same reasons.
    assert!(
        cal::start(
            &config(false, "", ""),
            &h.paths,
            &h.store,
            &Supervisor::detached()
        )
        .is_none()
    );
}

#[tokio::test]
async fn a_connected_calendar_starts_polling_and_opens_during_a_meeting() {
    let h = home();
    let fake = FakeGoogle::start().await.unwrap();
    fake.set_events("primary", vec![meeting_now()]);
    let secrets = fake.write_client_secrets(&h.paths.home).unwrap();
    let tokens: Arc<dyn TokenStore> = Arc::new(KeychainTokens::new(h.store.clone()));
    connect(&fake, &secrets, tokens.clone()).await;
    let raw = h.store.get(TOKEN_ACCOUNT).unwrap().unwrap();
    assert!(!raw.expose().contains(fake_google::CLIENT_SECRET));

    let shutdown = CancellationToken::new();
    let source = cal::start_with(
        &config(true, secrets.to_str().unwrap(), ""),
        &h.paths,
        tokens,
        &calendar::Endpoints::with_root(&fake.root_url()),
        Arc::new(SystemClock),
        &Supervisor::new(shutdown.clone()),
    )
    .unwrap();
    wait_open(&source).await;
    shutdown.cancel();
}

#[tokio::test]
async fn the_legacy_token_file_is_imported_once_and_left_in_place() {
    let h = home();
    let fake = FakeGoogle::start().await.unwrap();
    fake.set_events("primary", vec![meeting_now()]);
    let secrets = fake.write_client_secrets(&h.paths.home).unwrap();

    // A grant the earlier version obtained, written as google-auth's authorized-user JSON.
    let earlier = Arc::new(KeychainTokens::new(SecretStore::new(
        &Paths::new(h.paths.home.join("elsewhere")).unwrap(),
        BackendChoice::File,
    )));
    std::fs::create_dir_all(h.paths.home.join("elsewhere")).unwrap();
    connect(&fake, &secrets, earlier.clone()).await;
    let granted = StoredToken::parse(&earlier.load().unwrap().unwrap()).unwrap();
    let refresh = granted.refresh_token.clone().unwrap();
    let legacy = h.paths.home.join("calendar_token.json");
    let legacy_text = json!({
        "token": "ya29.stale",
        "refresh_token": refresh,
        "token_uri": format!("http://{}/token", fake.addr()),
        "client_id": fake_google::CLIENT_ID,
        "client_secret": fake_google::CLIENT_SECRET,
        "scopes": [fake_google::SCOPE],
        "expiry": "2020-01-01T00:00:00.000000Z",
    })
    .to_string();
    std::fs::write(&legacy, &legacy_text).unwrap();

    let tokens: Arc<dyn TokenStore> = Arc::new(KeychainTokens::new(h.store.clone()));
    let c = config(true, secrets.to_str().unwrap(), "calendar_token.json");
    let shutdown = CancellationToken::new();
    let source = cal::start_with(
        &c,
        &h.paths,
        tokens.clone(),
        &calendar::Endpoints::with_root(&fake.root_url()),
        Arc::new(SystemClock),
        &Supervisor::new(shutdown.clone()),
    )
    .unwrap();
    wait_open(&source).await;
    shutdown.cancel();

    let stored = tokens.load().unwrap().unwrap();
    assert!(
        !stored.contains(fake_google::CLIENT_SECRET),
        "the client secret is not imported"
    );
    let imported = StoredToken::parse(&stored).unwrap();
    assert_eq!(imported.refresh_token.as_deref(), Some(refresh.as_str()));
    assert_ne!(
        imported.access_token.as_deref(),
        Some("ya29.stale"),
        "refreshed before use"
    );
    assert_eq!(
        std::fs::read_to_string(&legacy).unwrap(),
        legacy_text,
        "the file is left alone"
    );

    // Once imported, the file is not read again: a token already in the store wins.
    tokens.save(r#"{"refresh_token":"newer"}"#).unwrap();
    assert!(!cal::import_legacy(
        &c.scheduler.calendar,
        &h.paths,
        tokens.as_ref()
    ));
    assert_eq!(
        tokens.load().unwrap().as_deref(),
        Some(r#"{"refresh_token":"newer"}"#)
    );
}
