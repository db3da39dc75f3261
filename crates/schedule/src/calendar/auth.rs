//! The client secrets file and the access token the Calendar API calls carry.
//!
//! Refreshing is done here rather than by a yup-oauth2 `Authenticator`: when a refresh fails
//! (revoked token, network down) the authenticator falls back to the interactive installed
//! flow, which in a background poller would wait forever on a browser nobody sees, and it
//! cannot tell a revoked token from an unreachable server. Here a refresh is one request
//! with a timeout, and `invalid_grant` becomes [`CalendarError::Revoked`].

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use google_calendar3::common;
use google_calendar3::hyper;
use serde::Deserialize;
use yup_oauth2::ApplicationSecret;

use super::CalendarError;
use super::client::Http;
use super::token::{self, StoredToken, TokenStore};

/// An access token this close to its expiry is refreshed first.
const EXPIRY_MARGIN_SECS: i64 = 60;
/// One token or API request.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The desktop-app client secrets (`{"installed": {...}}`, as the Google Cloud console
/// downloads it). Errors never quote the file's contents.
pub fn read_client_secret(path: &Path) -> Result<ApplicationSecret, CalendarError> {
    let fail = |message: String| CalendarError::Secrets {
        path: path.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let secret = yup_oauth2::parse_application_secret(&bytes).map_err(|_| {
        fail(
            "not a Google OAuth client secrets file (expected an \"installed\" section with \
             client_id, client_secret, auth_uri and token_uri; download it for a Desktop app \
             in the Google Cloud console)"
                .into(),
        )
    })?;
    if secret.client_id.is_empty() || secret.token_uri.is_empty() || secret.auth_uri.is_empty() {
        return Err(fail("client_id, auth_uri or token_uri is empty".into()));
    }
    Ok(secret)
}

/// Hands the Calendar client a valid access token, refreshing it with the stored refresh
/// token (and saving the result) when it is about to expire. Clones share the cache.
#[derive(Clone)]
pub struct RefreshingAuth {
    inner: Arc<Inner>,
}

struct Inner {
    secret: ApplicationSecret,
    store: Arc<dyn TokenStore>,
    http: Http,
    cached: tokio::sync::Mutex<Option<StoredToken>>,
}

impl RefreshingAuth {
    pub(crate) fn new(secret: ApplicationSecret, store: Arc<dyn TokenStore>, http: Http) -> Self {
        Self {
            inner: Arc::new(Inner {
                secret,
                store,
                http,
                cached: tokio::sync::Mutex::new(None),
            }),
        }
    }

    /// A usable access token; `force_refresh` after the API refused the current one.
    pub async fn access_token(&self, force_refresh: bool) -> Result<String, CalendarError> {
        let mut cached = self.inner.cached.lock().await;
        if cached.is_none() {
            *cached = token::load(&self.inner.store).await?;
        }
        let Some(current) = cached.as_ref() else {
            return Err(CalendarError::NotConnected);
        };
        if !force_refresh && let Some(t) = current.fresh_access(now_secs(), EXPIRY_MARGIN_SECS) {
            return Ok(t.to_owned());
        }
        let Some(refresh) = current.refresh_token.clone().filter(|r| !r.is_empty()) else {
            *cached = None;
            return Err(CalendarError::Revoked);
        };
        let fresh = match self.refresh(&refresh).await {
            Ok(f) => f,
            Err(e) => {
                if e == CalendarError::Revoked {
                    // Read the store again next time: a new `connect` replaces the token.
                    *cached = None;
                }
                return Err(e);
            }
        };
        token::save(&self.inner.store, &fresh).await?;
        let access = fresh.access_token.clone().unwrap_or_default();
        *cached = Some(fresh);
        Ok(access)
    }

    /// Forgets the cached token so the next call reads the store again.
    pub async fn forget(&self) {
        *self.inner.cached.lock().await = None;
    }

    async fn refresh(&self, refresh_token: &str) -> Result<StoredToken, CalendarError> {
        let s = &self.inner.secret;
        let form = form_encode(&[
            ("client_id", &s.client_id),
            ("client_secret", &s.client_secret),
            ("refresh_token", refresh_token),
            ("grant_type", "refresh_token"),
        ]);
        let request = hyper::Request::post(s.token_uri.as_str())
            .header(
                hyper::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(common::to_body(Some(form)))
            .map_err(|e| {
                CalendarError::SignIn(format!("bad token_uri in the secrets file: {e}"))
            })?;
        let response = tokio::time::timeout(REQUEST_TIMEOUT, self.inner.http.request(request))
            .await
            .map_err(|_| CalendarError::Network("the token request timed out".into()))?
            .map_err(|e| CalendarError::Network(describe_http(&e)))?;
        let status = response.status();
        let body = tokio::time::timeout(
            REQUEST_TIMEOUT,
            common::to_bytes(common::Body::new(response.into_body())),
        )
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
        if !status.is_success() {
            return Err(token_error(status.as_u16(), &body));
        }
        #[derive(Deserialize)]
        struct Granted {
            access_token: String,
            #[serde(default)]
            expires_in: Option<i64>,
            #[serde(default)]
            refresh_token: Option<String>,
        }
        let granted: Granted = serde_json::from_slice(&body).map_err(|_| CalendarError::Api {
            status: status.as_u16(),
            message: "the token endpoint answered something that is not a token".into(),
        })?;
        Ok(StoredToken {
            access_token: Some(granted.access_token),
            // Google rotates refresh tokens only sometimes; keep the old one otherwise.
            refresh_token: Some(
                granted
                    .refresh_token
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(|| refresh_token.to_owned()),
            ),
            expires_at: granted.expires_in.map(|s| now_secs() + s),
        })
    }
}

impl common::GetToken for RefreshingAuth {
    fn get_token<'a>(
        &'a self,
        _scopes: &'a [&str],
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<
                    Output = Result<Option<String>, Box<dyn std::error::Error + Send + Sync>>,
                > + Send
                + 'a,
        >,
    > {
        Box::pin(async move {
            self.access_token(false)
                .await
                .map(Some)
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
        })
    }
}

/// An OAuth error answer: `invalid_grant` means the refresh token is dead (revoked, expired,
/// password changed); anything else is reported with Google's own words.
fn token_error(status: u16, body: &[u8]) -> CalendarError {
    #[derive(Deserialize)]
    struct OAuthError {
        error: String,
        #[serde(default)]
        error_description: Option<String>,
    }
    match serde_json::from_slice::<OAuthError>(body) {
        Ok(e) if e.error == "invalid_grant" => CalendarError::Revoked,
        Ok(e) => CalendarError::Api {
            status,
            message: match e.error_description {
                Some(d) => format!("{} ({d})", e.error),
                None => e.error,
            },
        },
        Err(_) => CalendarError::Api {
            status,
            message: "the token endpoint refused the refresh".into(),
        },
    }
}

/// A transport error with its causes (`client error (Connect): tcp connect error: …`).
pub(crate) fn describe_http(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !out.contains(&s_text) {
            out.push_str(": ");
            out.push_str(&s_text);
        }
        source = s.source();
    }
    out
}

pub(crate) fn now_secs() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// `application/x-www-form-urlencoded`.
pub(crate) fn form_encode(pairs: &[(&str, &str)]) -> String {
    fn encode(s: &str, out: &mut String) {
        for b in s.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                    out.push(char::from(b));
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
    }
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode(k, &mut out);
        out.push('=');
        encode(v, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding_escapes_reserved_characters() {
        assert_eq!(
            form_encode(&[("a b", "1/2&3=4"), ("k", "é")]),
            "a+b=1%2F2%263%3D4&k=%C3%A9"
        );
    }

    #[test]
    fn invalid_grant_is_revoked_and_other_errors_keep_googles_words() {
        assert_eq!(
            token_error(400, br#"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#),
            CalendarError::Revoked
        );
        assert_eq!(
            token_error(401, br#"{"error":"invalid_client"}"#),
            CalendarError::Api {
                status: 401,
                message: "invalid_client".into()
            }
        );
    }
}
