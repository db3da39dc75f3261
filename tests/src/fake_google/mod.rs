//! A local stand-in for Google's OAuth endpoints and the Calendar v3 events list, speaking
//! the real wire protocol: the consent page redirects to the client's loopback
//! `redirect_uri` with `code` (and `state` when given); `/token` answers the
//! `authorization_code` and `refresh_token` grants (`invalid_grant` once revoked);
//! `/calendar/v3/calendars/{id}/events` checks the bearer token and pages with
//! `nextPageToken`. Faults: [`FakeGoogle::set_down`] closes every connection unanswered,
//! [`FakeGoogle::fail_calendar`] answers 500.
//!
//! Every response carries `Connection: close`, so a client never reuses a connection made
//! before the fake went down.

mod routes;
mod state;

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub use state::{CalendarRequest, TokenRequest};

pub const CLIENT_ID: &str = "fake-client.apps.googleusercontent.com";
pub const CLIENT_SECRET: &str = "fake-client-secret";
pub const SCOPE: &str = "https://www.googleapis.com/auth/calendar.readonly";

/// A running fake; stops when dropped.
#[derive(Debug)]
pub struct FakeGoogle {
    addr: SocketAddr,
    shared: Arc<state::Shared>,
    server: JoinHandle<io::Result<()>>,
}

impl Drop for FakeGoogle {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeGoogle {
    /// Serves on 127.0.0.1 (any free port) on the current tokio runtime.
    pub async fn start() -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(state::Shared::default());
        let app = routes::router(shared.clone());
        let listener = Faulty {
            inner: listener,
            shared: shared.clone(),
        };
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(Self {
            addr,
            shared,
            server,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:P/`: the Calendar API root (`<root>calendar/v3/` is the base).
    pub fn root_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// A desktop-app `client_secrets.json` whose endpoints are this fake.
    pub fn client_secrets_json(&self) -> String {
        serde_json::json!({
            "installed": {
                "client_id": CLIENT_ID,
                "project_id": "metaclaw-fake",
                "auth_uri": format!("http://{}/o/oauth2/auth", self.addr),
                "token_uri": format!("http://{}/token", self.addr),
                "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
                "client_secret": CLIENT_SECRET,
                "redirect_uris": ["http://localhost"]
            }
        })
        .to_string()
    }

    /// Writes [`Self::client_secrets_json`] to `dir/client_secrets.json`.
    pub fn write_client_secrets(&self, dir: &Path) -> io::Result<PathBuf> {
        let path = dir.join("client_secrets.json");
        std::fs::write(&path, self.client_secrets_json())?;
        Ok(path)
    }

    /// Replaces the events of `calendar` (Calendar API `Event` JSON objects, returned in the
    /// order given).
    pub fn set_events(&self, calendar: &str, events: Vec<serde_json::Value>) {
        self.shared.set_events(calendar, events);
    }

    /// Events per page (default 250, Google's maximum).
    pub fn set_page_size(&self, n: usize) {
        self.shared.with(|s| s.page_size = n.max(1));
    }

    /// Lifetime of the access tokens issued from now on (default one hour).
    pub fn set_access_ttl(&self, ttl: Duration) {
        self.shared.with(|s| s.access_ttl = ttl);
    }

    /// Makes every access token issued so far invalid (401 on the Calendar API), as if it
    /// had expired early; refresh tokens keep working.
    pub fn expire_access_tokens(&self) {
        self.shared.with(|s| s.access.clear());
    }

    /// Revokes every grant: refresh tokens answer `invalid_grant`, access tokens 401.
    pub fn revoke(&self) {
        self.shared.with(|s| {
            s.access.clear();
            s.revoked = true;
        });
    }

    /// While down, connections are accepted and closed without an answer.
    pub fn set_down(&self, down: bool) {
        self.shared.with(|s| s.down = down);
    }

    /// While on, the Calendar API answers 500 (OAuth endpoints keep working).
    pub fn fail_calendar(&self, fail: bool) {
        self.shared.with(|s| s.fail_calendar = fail);
    }

    /// Calendar API requests received so far.
    pub fn calendar_requests(&self) -> Vec<CalendarRequest> {
        self.shared.with(|s| s.calendar_requests.clone())
    }

    /// Token endpoint requests received so far (grant types and outcomes; no secrets).
    pub fn token_requests(&self) -> Vec<TokenRequest> {
        self.shared.with(|s| s.token_requests.clone())
    }

    /// Refresh grants answered with a new access token.
    pub fn refreshes(&self) -> usize {
        self.token_requests()
            .iter()
            .filter(|t| t.grant_type == "refresh_token" && t.status == 200)
            .count()
    }

    /// Whether `token` is a refresh token this fake issued (and has not revoked).
    pub fn is_live_refresh_token(&self, token: &str) -> bool {
        self.shared
            .with(|s| !s.revoked && s.refresh.contains(token))
    }

    /// Whether `token` is a currently valid access token.
    pub fn is_live_access_token(&self, token: &str) -> bool {
        self.shared.with(|s| s.access_valid(token))
    }
}

/// Accepts connections, closing them unanswered while the fake is down.
struct Faulty {
    inner: TcpListener,
    shared: Arc<state::Shared>,
}

impl axum::serve::Listener for Faulty {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    if self.shared.with(|s| s.down) {
                        drop(stream);
                        continue;
                    }
                    return (stream, addr);
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}
