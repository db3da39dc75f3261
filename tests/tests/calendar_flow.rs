//! The Google Calendar source end to end against the local fake Google: the installed flow
//! (the test plays the browser), token refresh, a revoked token, which events open a
//! window, paging, and the network going away and coming back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use metaclaw_e2e::fake_google::{self, FakeGoogle};
use metaclaw_schedule::calendar::{
    self, CalendarClient, CalendarError, CalendarPoller, CalendarSource, ConnectedInfo, Endpoints,
    Present, StoredToken, TokenStore,
};
use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::source::{Reading, Reason, Source};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A token store in memory, counting saves.
#[derive(Default)]
struct MemStore {
    token: Mutex<Option<String>>,
    saves: Mutex<usize>,
}

impl TokenStore for MemStore {
    fn load(&self) -> Result<Option<String>, String> {
        Ok(self.token.lock().unwrap().clone())
    }
    fn save(&self, token_json: &str) -> Result<(), String> {
        *self.token.lock().unwrap() = Some(token_json.to_owned());
        *self.saves.lock().unwrap() += 1;
        Ok(())
    }
    fn delete(&self) -> Result<(), String> {
        *self.token.lock().unwrap() = None;
        Ok(())
    }
}

impl MemStore {
    fn stored(&self) -> StoredToken {
        StoredToken::parse(
            self.token
                .lock()
                .unwrap()
                .as_deref()
                .expect("a stored token"),
        )
        .unwrap()
    }
}

struct Setup {
    fake: FakeGoogle,
    store: Arc<MemStore>,
    dir: tempfile::TempDir,
}

impl Setup {
    async fn new() -> Self {
        Self {
            fake: FakeGoogle::start().await.unwrap(),
            store: Arc::new(MemStore::default()),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn endpoints(&self) -> Endpoints {
        Endpoints::with_root(&self.fake.root_url())
    }

    fn secrets(&self) -> std::path::PathBuf {
        self.fake.write_client_secrets(self.dir.path()).unwrap()
    }

    /// Runs `calendar connect`, playing the browser: takes the address the flow presents,
    /// checks it, and follows the consent page's redirect to the loopback server.
    async fn connect(&self) -> ConnectedInfo {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let present = Present::Show(Arc::new(move |url: &str| {
            let _ = tx.send(url.to_owned());
        }));
        let flow = tokio::spawn({
            let secrets = self.secrets();
            let store: Arc<dyn TokenStore> = self.store.clone();
            let endpoints = self.endpoints();
            async move {
                calendar::connect(&secrets, store, &endpoints, vec!["primary".into()], present)
                    .await
            }
        });
        let url = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("the flow presented an address")
            .unwrap();
        assert!(
            url.starts_with(&format!("http://{}/o/oauth2/auth?", self.fake.addr())),
            "{url}"
        );
        assert!(
            url.contains(&format!("client_id={}", fake_google::CLIENT_ID)),
            "{url}"
        );
        assert!(url.contains("calendar.readonly"), "{url}");
        assert!(url.contains("redirect_uri=http://localhost:"), "{url}");
        assert!(url.contains("access_type=offline"), "{url}");
        let page = reqwest::get(&url).await.unwrap();
        assert!(page.status().is_success(), "{}", page.status());
        assert!(page.url().as_str().starts_with("http://localhost:"));
        assert!(
            page.text()
                .await
                .unwrap()
                .contains("You may now close this window")
        );
        tokio::time::timeout(Duration::from_secs(10), flow)
            .await
            .expect("connect finished")
            .unwrap()
            .expect("connect succeeded")
    }

    fn client(&self) -> CalendarClient {
        let secret = calendar::read_client_secret(&self.secrets()).unwrap();
        CalendarClient::new(
            secret,
            self.store.clone(),
            &self.endpoints(),
            vec!["primary".into()],
        )
        .unwrap()
    }

    fn poller(&self, interval: Duration) -> (CalendarPoller, CalendarSource) {
        let source = CalendarSource::new();
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        (
            CalendarPoller::new(self.client(), source.clone(), clock, interval),
            source,
        )
    }
}

/// Times relative to one instant fixed when the test starts (whole seconds, as Google
/// sends them).
fn times() -> impl Fn(i64) -> Timestamp + Copy {
    let now = Timestamp::from_second(Timestamp::now().as_second()).unwrap();
    move |minutes_from_now| {
        now.checked_add(SignedDuration::from_mins(minutes_from_now))
            .unwrap()
    }
}

fn timed(summary: &str, from: Timestamp, to: Timestamp, extra: Value) -> Value {
    let mut v = json!({
        "kind": "calendar#event",
        "id": summary.to_lowercase().replace(' ', "-"),
        "status": "confirmed",
        "summary": summary,
        "start": {"dateTime": from.to_string(), "timeZone": "UTC"},
        "end": {"dateTime": to.to_string(), "timeZone": "UTC"},
    });
    for (k, val) in extra.as_object().unwrap() {
        v[k] = val.clone();
    }
    v
}

/// An invitation from someone else that the user answered with `status`.
fn invited(summary: &str, from: Timestamp, to: Timestamp, status: &str) -> Value {
    timed(
        summary,
        from,
        to,
        json!({
            "organizer": {"email": "boss@example.com"},
            "attendees": [
                {"email": "boss@example.com", "organizer": true, "responseStatus": "accepted"},
                {"email": "me@example.com", "self": true, "responseStatus": status},
            ],
        }),
    )
}

/// Polls `source` (bounded) until `pred` holds for its reading now.
async fn wait_reading(
    source: &CalendarSource,
    what: &str,
    pred: impl Fn(&Reading) -> bool,
) -> Reading {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r = source.read(Timestamp::now());
        if pred(&r) {
            return r;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "source never became {what}; last reading {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn connect_runs_the_loopback_flow_and_stores_only_the_token() {
    let at = times();
    let s = Setup::new().await;
    s.fake.set_events(
        "primary",
        vec![invited("Standup", at(30), at(45), "accepted")],
    );
    let info = s.connect().await;
    assert_eq!(info.calendars, vec!["primary".to_owned()]);
    assert_eq!(info.busy_blocks_next_24h, 1);

    let raw = s.store.token.lock().unwrap().clone().unwrap();
    assert!(
        !raw.contains(fake_google::CLIENT_SECRET),
        "the client secret is not stored"
    );
    let token = s.store.stored();
    assert!(
        s.fake
            .is_live_refresh_token(token.refresh_token.as_deref().unwrap())
    );
    assert!(
        s.fake
            .is_live_access_token(token.access_token.as_deref().unwrap())
    );
    assert!(token.expires_at.unwrap() > Timestamp::now().as_second() + 3000);
    let grants: Vec<_> = s
        .fake
        .token_requests()
        .into_iter()
        .map(|t| (t.grant_type, t.status))
        .collect();
    assert_eq!(grants, vec![("authorization_code".to_owned(), 200)]);
}

#[tokio::test]
async fn only_accepted_opaque_timed_meetings_open_a_window_across_pages() {
    let at = times();
    let s = Setup::new().await;
    s.fake.set_page_size(2);
    s.fake.set_events(
        "primary",
        vec![
            // Declined and longer: must not stretch the window.
            invited("Declined all-hands", at(-10), at(120), "declined"),
            invited("Tentative sync", at(-5), at(90), "tentative"),
            invited("Unanswered", at(-5), at(90), "needsAction"),
            timed(
                "Focus (free)",
                at(-30),
                at(100),
                json!({"transparency": "transparent"}),
            ),
            json!({
                "summary": "Holiday", "status": "confirmed",
                "start": {"date": "2020-01-01"}, "end": {"date": "2099-01-01"},
            }),
            invited("Cancelled review", at(-10), at(60), "accepted")
                .as_object()
                .map(|o| {
                    let mut o = o.clone();
                    o.insert("status".into(), json!("cancelled"));
                    Value::Object(o)
                })
                .unwrap(),
            invited("Design review", at(-10), at(20), "accepted"),
            // Organised by the user, guests not answered yet: counts.
            timed(
                "My planning",
                at(60),
                at(90),
                json!({
                    "organizer": {"email": "me@example.com", "self": true},
                    "attendees": [{"email": "a@example.com", "responseStatus": "needsAction"}],
                }),
            ),
        ],
    );
    s.connect().await;
    let (poller, source) = s.poller(Duration::from_secs(3600));
    poller.poll_once().await.unwrap();

    assert_eq!(
        source.read(Timestamp::now()),
        Reading::Open {
            until: Some(at(20))
        },
        "the accepted meeting, and only it, holds the window"
    );
    assert_eq!(source.read(at(25)), Reading::Closed);
    assert_eq!(
        source.read(at(75)),
        Reading::Open {
            until: Some(at(90))
        }
    );
    let next = source.next(Timestamp::now()).unwrap();
    assert_eq!(
        (next.reason, next.starts, next.ends),
        (Reason::Calendar, at(60), Some(at(90)))
    );
    assert_eq!(source.reason(), Reason::Calendar);

    let requests: Vec<_> = s
        .fake
        .calendar_requests()
        .into_iter()
        .filter(|r| r.status == 200)
        .collect();
    // connect's check and this poll, 8 events at 2 a page: 4 pages each.
    assert_eq!(requests.len(), 8, "{requests:?}");
    let poll = &requests[4..];
    assert_eq!(
        poll.iter()
            .map(|r| r.query.get("pageToken").cloned())
            .collect::<Vec<_>>(),
        vec![
            None,
            Some("page-2".into()),
            Some("page-4".into()),
            Some("page-6".into())
        ]
    );
    let q = &poll[0].query;
    assert_eq!(q.get("singleEvents").map(String::as_str), Some("true"));
    assert_eq!(q.get("orderBy").map(String::as_str), Some("startTime"));
    let min: Timestamp = q["timeMin"].parse().unwrap();
    let max: Timestamp = q["timeMax"].parse().unwrap();
    assert_eq!(max.duration_since(min), SignedDuration::from_hours(24));
    assert!(min.duration_since(Timestamp::now()).abs() < SignedDuration::from_mins(1));
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_and_saved() {
    let at = times();
    let s = Setup::new().await;
    s.fake.set_events("primary", vec![]);
    s.connect().await;
    let first = s.store.stored();
    let client = s.client();
    let (from, to) = (at(0), at(60));

    // Refused before its expiry: refreshed once, the request retried.
    s.fake.expire_access_tokens();
    client.busy_between(from, to).await.unwrap();
    assert_eq!(s.fake.refreshes(), 1);
    let second = s.store.stored();
    assert_ne!(second.access_token, first.access_token);
    assert_eq!(
        second.refresh_token, first.refresh_token,
        "the refresh token is kept"
    );
    assert!(
        s.fake
            .is_live_access_token(second.access_token.as_deref().unwrap())
    );

    // A token that expires within the margin is refreshed before each use, without a 401.
    s.fake.set_access_ttl(Duration::from_secs(30));
    s.fake.expire_access_tokens();
    client.busy_between(from, to).await.unwrap();
    let refreshes_before = s.fake.refreshes();
    let refused_before = s
        .fake
        .calendar_requests()
        .iter()
        .filter(|r| r.status == 401)
        .count();
    client.busy_between(from, to).await.unwrap();
    client.busy_between(from, to).await.unwrap();
    assert_eq!(
        s.fake.refreshes(),
        refreshes_before + 2,
        "a 30 s token is refreshed ahead of each use"
    );
    let refused_after = s
        .fake
        .calendar_requests()
        .iter()
        .filter(|r| r.status == 401)
        .count();
    assert_eq!(refused_after, refused_before);
}

#[tokio::test]
async fn a_revoked_token_makes_the_source_unavailable_and_a_new_connect_recovers() {
    let at = times();
    let s = Setup::new().await;
    s.fake.set_events(
        "primary",
        vec![invited("Review", at(-5), at(30), "accepted")],
    );
    s.connect().await;
    let (poller, source) = s.poller(Duration::from_millis(50));
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(poller.run(shutdown.clone()));
    wait_reading(&source, "open", |r| matches!(r, Reading::Open { .. })).await;

    s.fake.revoke();
    let r = wait_reading(&source, "unavailable", |r| {
        matches!(r, Reading::Unavailable { .. })
    })
    .await;
    assert_eq!(
        r,
        Reading::Unavailable {
            detail: "Google refused the calendar token (revoked?): run `metaclaw scheduler calendar connect`".into()
        }
    );
    assert_eq!(
        CalendarError::Revoked.to_string(),
        match &r {
            Reading::Unavailable { detail } => detail.clone(),
            _ => unreachable!(),
        }
    );
    assert!(!task.is_finished(), "the poller keeps running");
    assert!(source.next(Timestamp::now()).is_none());

    // The user connects again; the running poller picks the new token up.
    s.connect().await;
    wait_reading(&source, "open again", |r| matches!(r, Reading::Open { .. })).await;

    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the poller stops on shutdown")
        .unwrap();
}

#[tokio::test]
async fn network_failures_degrade_the_source_and_the_next_poll_recovers() {
    let at = times();
    let s = Setup::new().await;
    s.fake.set_events(
        "primary",
        vec![invited("Review", at(-5), at(30), "accepted")],
    );
    s.connect().await;
    let (poller, source) = s.poller(Duration::from_millis(50));
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(poller.run(shutdown.clone()));
    wait_reading(&source, "open", |r| {
        *r == Reading::Open {
            until: Some(at(30)),
        }
    })
    .await;

    s.fake.set_down(true);
    let r = wait_reading(&source, "unavailable", |r| {
        matches!(r, Reading::Unavailable { .. })
    })
    .await;
    let Reading::Unavailable { detail } = r else {
        unreachable!()
    };
    assert!(detail.starts_with("cannot reach Google"), "{detail}");
    assert!(!task.is_finished());

    s.fake.set_down(false);
    wait_reading(&source, "open again", |r| {
        *r == Reading::Open {
            until: Some(at(30)),
        }
    })
    .await;

    s.fake.fail_calendar(true);
    let r = wait_reading(&source, "unavailable on 500", |r| {
        matches!(r, Reading::Unavailable { .. })
    })
    .await;
    let Reading::Unavailable { detail } = r else {
        unreachable!()
    };
    assert!(detail.starts_with("Google answered 500"), "{detail}");

    s.fake.fail_calendar(false);
    wait_reading(&source, "open after the 500s", |r| {
        matches!(r, Reading::Open { .. })
    })
    .await;
    assert!(!task.is_finished());
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn without_a_token_the_client_says_not_connected() {
    let at = times();
    let s = Setup::new().await;
    s.fake.set_events("primary", vec![]);
    let err = s.client().busy_between(at(0), at(60)).await.unwrap_err();
    assert_eq!(err, CalendarError::NotConnected);
    assert!(s.fake.calendar_requests().is_empty());
}
