//! `calendar connect`: the OAuth installed flow with a loopback redirect, once, by the user.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use yup_oauth2::authenticator_delegate::InstalledFlowDelegate;
use yup_oauth2::{InstalledFlowAuthenticator, InstalledFlowReturnMethod};

use super::auth::read_client_secret;
use super::token::{self, TokenStore, TokenStoreAdapter};
use super::{CalendarClient, CalendarError, Endpoints, HORIZON, SCOPE};

/// How long the user has to finish signing in.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Shows the sign-in address to the user (prints it, or hands it to a test).
pub type ShowUrl = Arc<dyn Fn(&str) + Send + Sync>;

/// How the sign-in address reaches the user.
#[derive(Clone)]
pub enum Present {
    /// Open the system browser; `show` is also called, so the address is visible when no
    /// browser appears.
    Browser { show: ShowUrl },
    /// Only show the address (`--no-browser`, a remote machine, tests).
    Show(ShowUrl),
}

impl std::fmt::Debug for Present {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Present::Browser { .. } => "Present::Browser",
            Present::Show(_) => "Present::Show",
        })
    }
}

/// What a successful connect found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectedInfo {
    /// Busy blocks in the next 24 hours of the checked calendars (the token works).
    pub busy_blocks_next_24h: usize,
    /// The calendars checked.
    pub calendars: Vec<String>,
}

/// Runs the installed flow: a loopback server on a random port, the consent page in the
/// browser, the code exchanged at the secrets file's `token_uri`, and the token saved in
/// `store`. Then reads `calendars` once to prove the token works.
pub async fn connect(
    secrets_path: &Path,
    store: Arc<dyn TokenStore>,
    endpoints: &Endpoints,
    calendars: Vec<String>,
    present: Present,
) -> Result<ConnectedInfo, CalendarError> {
    let secret = read_client_secret(secrets_path)?;
    let auth = InstalledFlowAuthenticator::builder(
        secret.clone(),
        InstalledFlowReturnMethod::HTTPRedirect,
    )
    // The consent screen every time: Google only returns a refresh token on consent.
    .force_account_selection(true)
    .with_storage(Box::new(TokenStoreAdapter::write_only(store.clone())))
    .flow_delegate(Box::new(Presenter(present)))
    .build()
    .await
    .map_err(|e| CalendarError::SignIn(e.to_string()))?;
    let scopes = [SCOPE];
    // yup-oauth2 logs the authorization code and the raw token response at debug level
    // (bridged into tracing when a subscriber forwards `log`): cap `log` while it runs.
    let level = log::max_level();
    log::set_max_level(level.min(log::LevelFilter::Info));
    let outcome = tokio::time::timeout(CONNECT_TIMEOUT, auth.token(&scopes)).await;
    log::set_max_level(level);
    outcome
        .map_err(|_| CalendarError::Timeout(CONNECT_TIMEOUT.as_secs()))?
        .map_err(|e| CalendarError::SignIn(sign_in_error(&e)))?;
    // yup-oauth2 saved the token through the adapter; make sure it is usable.
    let saved = token::load(&store)
        .await?
        .ok_or_else(|| CalendarError::Store("the token was not saved".into()))?;
    if saved.refresh_token.as_deref().is_none_or(str::is_empty) {
        return Err(CalendarError::SignIn(
            "Google returned no refresh token; remove MetaClaw's access at \
             https://myaccount.google.com/permissions and connect again"
                .into(),
        ));
    }
    let client = CalendarClient::new(secret, store, endpoints, calendars.clone())?;
    let now = jiff::Timestamp::now();
    let horizon = jiff::SignedDuration::try_from(HORIZON).unwrap_or_default();
    let blocks = client
        .busy_between(now, now.saturating_add(horizon).unwrap_or(now))
        .await?;
    Ok(ConnectedInfo {
        busy_blocks_next_24h: blocks.len(),
        calendars,
    })
}

/// yup-oauth2's errors, without anything the server sent back verbatim (a token response
/// body could be quoted by a JSON error).
fn sign_in_error(e: &yup_oauth2::Error) -> String {
    match e {
        yup_oauth2::Error::AuthError(a) => a.to_string(),
        yup_oauth2::Error::HttpError(h) => format!("cannot reach Google ({h})"),
        yup_oauth2::Error::JSONError(_) => "the token endpoint's answer is not a token".into(),
        yup_oauth2::Error::UserError(u) => u.clone(),
        other => other.to_string(),
    }
}

struct Presenter(Present);

impl InstalledFlowDelegate for Presenter {
    fn present_user_url<'a>(
        &'a self,
        url: &'a str,
        _need_code: bool,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async move {
            match &self.0 {
                Present::Browser { show } => {
                    show(url);
                    if let Err(e) = open_browser(url) {
                        tracing::warn!(error = %e, "cannot open a browser; open the address shown");
                    }
                }
                Present::Show(show) => show(url),
            }
            Ok(String::new())
        })
    }
}

fn open_browser(url: &str) -> std::io::Result<()> {
    #[cfg(target_os = "macos")]
    let mut command = std::process::Command::new("open");
    #[cfg(target_os = "windows")]
    let mut command = {
        let mut c = std::process::Command::new("rundll32");
        c.arg("url.dll,FileProtocolHandler");
        c
    };
    #[cfg(not(any(target_os = "macos", target_os = "windows")))]
    let mut command = std::process::Command::new("xdg-open");
    command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
}
