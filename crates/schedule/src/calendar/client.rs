//! One fetch of the busy blocks in the configured calendars.

use std::sync::Arc;

use google_calendar3::CalendarHub;
use google_calendar3::common;
use google_calendar3::hyper_rustls::HttpsConnector;
use google_calendar3::hyper_util::client::legacy::connect::HttpConnector;
use google_calendar3::hyper_util::rt::TokioExecutor;
use jiff::Timestamp;
use yup_oauth2::ApplicationSecret;

use super::auth::{REQUEST_TIMEOUT, RefreshingAuth, describe_http};
use super::events::{BusyBlock, busy_blocks, merge, to_chrono};
use super::token::TokenStore;
use super::{CalendarError, Endpoints};

pub(crate) type Connector = HttpsConnector<HttpConnector>;
pub(crate) type Http = common::Client<Connector>;

/// Pages per calendar at most, so a misbehaving server cannot keep a fetch going forever.
const MAX_PAGES: usize = 50;

/// The Calendar API with a refreshing token, for a fixed list of calendars.
#[derive(Clone)]
pub struct CalendarClient {
    hub: Arc<CalendarHub<Connector>>,
    auth: RefreshingAuth,
    calendars: Vec<String>,
}

impl CalendarClient {
    pub fn new(
        secret: ApplicationSecret,
        store: Arc<dyn TokenStore>,
        endpoints: &Endpoints,
        calendars: Vec<String>,
    ) -> Result<Self, CalendarError> {
        let http = http_client()?;
        let auth = RefreshingAuth::new(secret, store, http.clone());
        let mut hub = CalendarHub::new(http, auth.clone());
        hub.base_url(endpoints.calendar_base_url.clone());
        hub.root_url(endpoints.calendar_root_url.clone());
        Ok(Self {
            hub: Arc::new(hub),
            auth,
            calendars,
        })
    }

    pub fn calendars(&self) -> &[String] {
        &self.calendars
    }

    pub fn auth(&self) -> &RefreshingAuth {
        &self.auth
    }

    /// The busy blocks between `from` and `to` across every calendar (all pages).
    pub async fn busy_between(
        &self,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<BusyBlock>, CalendarError> {
        let mut all = Vec::new();
        for calendar in &self.calendars {
            all.extend(self.calendar_busy(calendar, from, to).await?);
        }
        Ok(merge(all))
    }

    async fn calendar_busy(
        &self,
        calendar: &str,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<BusyBlock>, CalendarError> {
        let (Some(min), Some(max)) = (to_chrono(from), to_chrono(to)) else {
            return Err(CalendarError::Api {
                status: 0,
                message: "time out of range".into(),
            });
        };
        let mut events = Vec::new();
        let mut page: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut retried = false;
            let listed = loop {
                let mut call = self
                    .hub
                    .events()
                    .list(calendar)
                    .time_min(min)
                    .time_max(max)
                    .single_events(true)
                    .order_by("startTime")
                    .max_results(250)
                    .add_scope(super::SCOPE);
                if let Some(p) = &page {
                    call = call.page_token(p);
                }
                let result = tokio::time::timeout(REQUEST_TIMEOUT, call.doit())
                    .await
                    .map_err(|_| CalendarError::Network("the calendar request timed out".into()))?;
                match result {
                    Ok((_, listed)) => break listed,
                    // The access token was refused before its expiry (revoked access, clock
                    // skew): refresh once and retry.
                    Err(e) if !retried && is_unauthorized(&e) => {
                        retried = true;
                        self.auth.access_token(true).await?;
                    }
                    Err(e) => return Err(api_error(calendar, e)),
                }
            };
            events.extend(listed.items.unwrap_or_default());
            match listed.next_page_token.filter(|t| !t.is_empty()) {
                Some(next) => page = Some(next),
                None => return Ok(busy_blocks(&events)),
            }
        }
        Err(CalendarError::Api {
            status: 0,
            message: format!("calendar {calendar}: more than {MAX_PAGES} pages of events"),
        })
    }
}

fn is_unauthorized(e: &common::Error) -> bool {
    match e {
        common::Error::BadRequest(v) => status_of(v) == Some(401),
        common::Error::Failure(r) => r.status().as_u16() == 401,
        _ => false,
    }
}

fn status_of(v: &serde_json::Value) -> Option<u64> {
    v.get("error")?.get("code")?.as_u64()
}

fn api_error(calendar: &str, e: common::Error) -> CalendarError {
    match e {
        common::Error::MissingToken(inner) => match inner.downcast::<CalendarError>() {
            Ok(e) => *e,
            Err(other) => CalendarError::SignIn(other.to_string()),
        },
        common::Error::HttpError(e) => CalendarError::Network(describe_http(&e)),
        common::Error::Io(e) => CalendarError::Network(e.to_string()),
        common::Error::BadRequest(v) => {
            let status = status_of(&v)
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(400);
            let message = v
                .get("error")
                .and_then(|e| e.get("message"))
                .and_then(|m| m.as_str())
                .unwrap_or("request refused");
            if status == 401 {
                return CalendarError::Revoked;
            }
            CalendarError::Api {
                status,
                message: format!("calendar {calendar}: {message}"),
            }
        }
        common::Error::Failure(r) => {
            let status = r.status().as_u16();
            if status == 401 {
                return CalendarError::Revoked;
            }
            CalendarError::Api {
                status,
                message: format!("calendar {calendar}: {}", r.status()),
            }
        }
        common::Error::JsonDecodeError(_, e) => CalendarError::Api {
            status: 200,
            message: format!("calendar {calendar}: unreadable answer ({e})"),
        },
        other => CalendarError::Api {
            status: 0,
            message: format!("calendar {calendar}: {}", other.to_string().trim()),
        },
    }
}

/// HTTPS with the system's roots (plain HTTP too, for a local fake or mirror). Without
/// any system roots the client still works for HTTP and HTTPS fails with a clear error.
pub(crate) fn http_client() -> Result<Http, CalendarError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = google_calendar3::hyper_rustls::HttpsConnectorBuilder::new();
    let builder = match builder.with_provider_and_native_roots(provider.clone()) {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(error = %e, "no system TLS roots; Google over HTTPS will fail");
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| CalendarError::Network(e.to_string()))?
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth();
            google_calendar3::hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(config)
        }
    };
    let connector = builder
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .build();
    Ok(
        google_calendar3::hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            .build(connector),
    )
}
