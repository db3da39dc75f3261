//! `metaclaw scheduler calendar connect --no-browser | status | disconnect` through the real
//! binary against the fake Google: the test reads the sign-in address from stdout and plays
//! the browser. Needs `cargo build -p metaclaw` first.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::daemon::Home;
use jiff::{SignedDuration, Timestamp};
use metaclaw_e2e::fake_google::{self, FakeGoogle};
use serde_json::json;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// No credential the fake issued or holds may ever be printed.
fn assert_no_secrets(out: &str) {
    for needle in [
        fake_google::CLIENT_SECRET,
        "fake-refresh",
        "fake-access",
        "fake-code",
    ] {
        assert!(!out.contains(needle), "`{needle}` printed:\n{out}");
    }
}

async fn run(home: &Home, fake: &FakeGoogle, args: &'static [&'static str]) -> Output {
    let mut c = home.cmd("file", args);
    c.env("METACLAW_GOOGLE_CALENDAR_URL", fake.root_url());
    tokio::time::timeout(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || c.output().unwrap()),
    )
    .await
    .unwrap()
    .unwrap()
}

/// `scheduler calendar connect --no-browser`, reading the address from stdout and opening it
/// as a browser would. Returns the exit status and stdout.
async fn cli_connect(home: &Home, fake: &FakeGoogle) -> (std::process::ExitStatus, String) {
    let mut cmd = home.cmd(
        "file",
        &["scheduler", "calendar", "connect", "--no-browser"],
    );
    cmd.env("METACLAW_GOOGLE_CALENDAR_URL", fake.root_url())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if line.starts_with("http://") {
                let _ = tx.send(line.clone());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let url = tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("the sign-in address was printed")
        .unwrap();
    assert!(url.contains("/o/oauth2/auth?"), "{url}");
    let page = reqwest::get(&url).await.unwrap();
    assert!(page.status().is_success(), "{}", page.status());
    let status = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || child.wait().unwrap()),
    )
    .await
    .expect("connect exits once signed in")
    .unwrap();
    let out = reader.join().unwrap();
    (status, out)
}

#[tokio::test]
async fn connect_status_and_disconnect_through_the_binary() {
    let fake = FakeGoogle::start().await.unwrap();
    let now = Timestamp::from_second(Timestamp::now().as_second()).unwrap();
    fake.set_events(
        "primary",
        vec![json!({
            "summary": "Quarterly review",
            "start": {"dateTime": now.checked_add(SignedDuration::from_mins(30)).unwrap().to_string()},
            "end": {"dateTime": now.checked_add(SignedDuration::from_mins(90)).unwrap().to_string()},
        })],
    );
    let home = Home::new("");
    let secrets = fake.write_client_secrets(home.path()).unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "scheduler:\n  calendar:\n    credentials_path: {}\n",
            secrets.display()
        ),
    )
    .unwrap();

    let (status, out) = cli_connect(&home, &fake).await;
    assert!(status.success(), "{out}");
    assert!(out.contains("Connected to Google Calendar"), "{out}");
    assert!(out.contains("1 busy block in the next 24 hours"), "{out}");
    assert!(
        out.contains("Set scheduler.calendar.enabled = true"),
        "{out}"
    );
    assert_no_secrets(&out);
    let enabled = run(
        &home,
        &fake,
        &["config", "get", "scheduler.calendar.enabled"],
    )
    .await;
    assert_eq!(String::from_utf8_lossy(&enabled.stdout).trim(), "true");

    // status: connected, and the meeting seen.
    let o = run(&home, &fake, &["scheduler", "calendar", "status"]).await;
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("Google Calendar: connected"), "{out}");
    assert!(out.contains("calendars:    primary"), "{out}");
    assert!(out.contains("Quarterly review"), "{out}");
    assert_no_secrets(&out);

    // A revoked grant: status says so and fails.
    fake.revoke();
    let o = run(&home, &fake, &["scheduler", "calendar", "status"]).await;
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("Google refused the calendar token (revoked?)"),
        "{out}"
    );

    // disconnect deletes the token.
    let o = run(&home, &fake, &["scheduler", "calendar", "disconnect"]).await;
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("Disconnected"), "{}", text(&o));
    let o = run(&home, &fake, &["scheduler", "calendar", "status"]).await;
    assert!(text(&o).contains("not connected"), "{}", text(&o));
    let o = run(&home, &fake, &["scheduler", "calendar", "disconnect"]).await;
    assert!(
        text(&o).contains("No Google token was stored"),
        "{}",
        text(&o)
    );
}

#[tokio::test]
async fn connect_without_client_secrets_says_what_to_set() {
    let fake = FakeGoogle::start().await.unwrap();
    let home = Home::new("");
    let o = run(
        &home,
        &fake,
        &["scheduler", "calendar", "connect", "--no-browser"],
    )
    .await;
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("scheduler.calendar.credentials_path is not set"),
        "{}",
        text(&o)
    );
    assert!(fake.token_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_running_daemon_opens_a_window_during_an_accepted_meeting() {
    let fake = FakeGoogle::start().await.unwrap();
    let now = Timestamp::from_second(Timestamp::now().as_second()).unwrap();
    let end = now.checked_add(SignedDuration::from_mins(40)).unwrap();
    fake.set_events(
        "primary",
        vec![
            json!({
                "summary": "Declined offsite",
                "start": {"dateTime": now.checked_sub(SignedDuration::from_mins(10)).unwrap().to_string()},
                "end": {"dateTime": now.checked_add(SignedDuration::from_mins(300)).unwrap().to_string()},
                "attendees": [{"email": "me@example.com", "self": true, "responseStatus": "declined"}],
            }),
            json!({
                "summary": "Board meeting",
                "start": {"dateTime": now.checked_sub(SignedDuration::from_mins(5)).unwrap().to_string()},
                "end": {"dateTime": end.to_string()},
                "attendees": [{"email": "me@example.com", "self": true, "responseStatus": "accepted"}],
            }),
        ],
    );
    let port = common::daemon::free_port();
    let home = Home::new("");
    let secrets = fake.write_client_secrets(home.path()).unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "proxy:\n  port: {port}\nscheduler:\n  calendar:\n    credentials_path: {}\n",
            secrets.display()
        ),
    )
    .unwrap();
    let (status, out) = cli_connect(&home, &fake).await;
    assert!(status.success(), "{out}");

    let o = run(&home, &fake, &["start", "--daemon"]).await;
    assert!(o.status.success(), "{}", text(&o));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let o = run(&home, &fake, &["scheduler", "status", "--json"]).await;
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["sources"]["calendar"], json!(true), "{v}");
        let calendar = v["readings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["reason"] == "calendar")
            .cloned()
            .unwrap_or_default();
        if calendar["state"] == "open" {
            let until: Timestamp = calendar["until"].as_str().unwrap().parse().unwrap();
            assert_eq!(
                until, end,
                "the accepted meeting's end, not the declined one's: {v}"
            );
            assert!(
                v["reasons"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("calendar")),
                "{v}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the calendar never opened a window: {v}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        fake.calendar_requests().iter().any(|r| r.status == 200),
        "the daemon read the fake"
    );
    let o = run(&home, &fake, &["stop"]).await;
    assert!(o.status.success(), "{}", text(&o));
}
