//! Google Calendar in the engine: the token in the secret store, the one-time import of the
//! legacy token file, the poller the scheduler reads, and what the CLI's
//! `scheduler calendar connect | disconnect | status` need.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use metaclaw_schedule::calendar::{self, CalendarClient, CalendarPoller, TokenStore};
pub use metaclaw_schedule::calendar::{
    BusyBlock, CalendarError, CalendarSource, ConnectedInfo, Endpoints, Present, ShowUrl,
};
use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::source::Source;

use crate::config::{CalendarConfig, Config};
use crate::paths::Paths;
use crate::secrets::{SecretError, SecretStore};
use crate::supervise::Supervisor;

/// Secret-store account of the Google token document (access and refresh token). Not a
/// config key: only `calendar connect` writes it and `calendar disconnect` deletes it.
pub const TOKEN_ACCOUNT: &str = "scheduler.calendar.token";

/// Overrides where the Calendar API lives (`http://127.0.0.1:PORT/` → the API at
/// `<url>calendar/v3/`): for tests against a local fake and for self-hosted mirrors. The
/// OAuth endpoints come from the client secrets file.
pub const URL_ENV: &str = "METACLAW_GOOGLE_CALENDAR_URL";

/// The token in the [`SecretStore`] (keychain, or its 0600 fallback file). Every call
/// blocks; the calendar code calls it on the blocking pool.
#[derive(Debug, Clone)]
pub struct KeychainTokens {
    store: SecretStore,
}

impl KeychainTokens {
    pub fn new(store: SecretStore) -> Self {
        Self { store }
    }
}

impl TokenStore for KeychainTokens {
    fn load(&self) -> Result<Option<String>, String> {
        self.store
            .get(TOKEN_ACCOUNT)
            .map(|s| s.map(|s| s.expose().to_owned()))
            .map_err(|e| e.to_string())
    }

    fn save(&self, token_json: &str) -> Result<(), String> {
        self.store
            .set(TOKEN_ACCOUNT, token_json)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn delete(&self) -> Result<(), String> {
        self.store
            .delete(TOKEN_ACCOUNT)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// Google's endpoints, or the ones [`URL_ENV`] names.
pub fn endpoints() -> Endpoints {
    match std::env::var(URL_ENV) {
        Ok(url) if !url.trim().is_empty() => Endpoints::with_root(url.trim()),
        _ => Endpoints::google(),
    }
}

/// A configured path: `~/` is the user's home, a relative path is under MetaClaw's home
/// (the daemon and the CLI run from different directories).
pub fn resolve_path(paths: &Paths, configured: &str) -> PathBuf {
    if let Some(rest) = configured.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"))
    {
        return PathBuf::from(home).join(rest);
    }
    let p = Path::new(configured);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        paths.home.join(p)
    }
}

/// No client secrets file is configured: the sign-in cannot start.
#[derive(Debug, thiserror::Error)]
#[error(
    "scheduler.calendar.credentials_path is not set: download a Desktop-app OAuth \
     client (client_secrets.json) from the Google Cloud console and run \
     `metaclaw config set scheduler.calendar.credentials_path /path/to/client_secrets.json`"
)]
pub struct NoCredentials;

impl From<NoCredentials> for CalendarError {
    fn from(e: NoCredentials) -> Self {
        CalendarError::Secrets {
            path: PathBuf::new(),
            message: e.to_string(),
        }
    }
}

/// The client secrets path, or why there is none.
pub fn credentials_path(config: &CalendarConfig, paths: &Paths) -> Result<PathBuf, NoCredentials> {
    let configured = config.credentials_path.trim();
    if configured.is_empty() {
        return Err(NoCredentials);
    }
    Ok(resolve_path(paths, configured))
}

/// Imports the legacy `token_path` file once: only while the store holds no token. The file
/// is left where it is (the earlier version may still be installed). Blocking.
pub fn import_legacy(config: &CalendarConfig, paths: &Paths, tokens: &dyn TokenStore) -> bool {
    let configured = config.token_path.trim();
    if configured.is_empty() {
        return false;
    }
    let path = resolve_path(paths, configured);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return false;
    };
    match tokens.load() {
        Ok(None) => {}
        Ok(Some(_)) => return false,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the calendar token; the legacy token file is not imported");
            return false;
        }
    }
    let imported = match calendar::import_legacy_token(&text) {
        Ok(Some(t)) => t,
        Ok(None) => {
            tracing::warn!(file = %path.display(), "the legacy calendar token file holds no refresh token; run `metaclaw scheduler calendar connect`");
            return false;
        }
        Err(e) => {
            tracing::warn!(file = %path.display(), error = %e, "cannot import the legacy calendar token");
            return false;
        }
    };
    let saved = imported
        .to_json()
        .map_err(|e| e.to_string())
        .and_then(|json| tokens.save(&json));
    match saved {
        Ok(()) => {
            tracing::info!(
                file = %path.display(),
                "imported the legacy calendar token into the secret store; the file is no longer read and can be deleted"
            );
            true
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot store the imported calendar token");
            false
        }
    }
}

/// The calendar source for the scheduler, its poller running until the engine stops; `None`
/// (with the reason logged) when the calendar is off, not set up, or not connected.
/// Must be called inside a tokio runtime.
pub fn start(
    config: &Config,
    paths: &Paths,
    store: &SecretStore,
    tasks: &Supervisor,
) -> Option<Box<dyn Source>> {
    let tokens: Arc<dyn TokenStore> = Arc::new(KeychainTokens::new(store.clone()));
    match start_with(
        config,
        paths,
        tokens,
        &endpoints(),
        Arc::new(SystemClock),
        tasks,
    ) {
        Ok(source) => Some(Box::new(source)),
        Err(why) => {
            tracing::info!("calendar meetings do not open windows: {why}");
            None
        }
    }
}

/// [`start`] with the token store, endpoints and clock given (tests).
pub fn start_with(
    config: &Config,
    paths: &Paths,
    tokens: Arc<dyn TokenStore>,
    endpoints: &Endpoints,
    clock: Arc<dyn Clock>,
    tasks: &Supervisor,
) -> Result<CalendarSource, String> {
    let c = &config.scheduler.calendar;
    if !c.enabled {
        return Err("scheduler.calendar.enabled is off".into());
    }
    let secrets_path = credentials_path(c, paths).map_err(|e| e.to_string())?;
    let secret = calendar::read_client_secret(&secrets_path).map_err(|e| e.to_string())?;
    // Keychain calls must not run on a tokio worker: a plain thread does the lookups.
    let connected = {
        let (c, paths, tokens) = (c.clone(), paths.clone(), tokens.clone());
        std::thread::spawn(move || {
            import_legacy(&c, &paths, tokens.as_ref());
            tokens.load().map(|t| t.is_some())
        })
        .join()
        .map_err(|_| "the token lookup failed".to_owned())?
    };
    match connected {
        Ok(true) => {}
        Ok(false) => return Err(CalendarError::NotConnected.to_string()),
        Err(e) => return Err(format!("cannot read the calendar token: {e}")),
    }
    let client =
        CalendarClient::new(secret, tokens, endpoints, calendars(c)).map_err(|e| e.to_string())?;
    let source = CalendarSource::new();
    let poller = CalendarPoller::new(client, source.clone(), clock, poll_interval(c));
    tasks.spawn("calendar poller", poller.run(tasks.shutdown_token()));
    tracing::info!(calendars = ?calendars(c), every_minutes = c.poll_minutes, "reading the calendar");
    Ok(source)
}

/// `scheduler.calendar.calendars`, `primary` when empty.
pub fn calendars(c: &CalendarConfig) -> Vec<String> {
    let list: Vec<String> = c
        .calendars
        .iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    if list.is_empty() {
        vec!["primary".into()]
    } else {
        list
    }
}

fn poll_interval(c: &CalendarConfig) -> Duration {
    Duration::from_secs(u64::from(c.poll_minutes.max(1)) * 60)
}

/// `calendar connect`: the installed flow, the token into the secret store.
pub async fn connect(
    config: &Config,
    paths: &Paths,
    store: &SecretStore,
    present: Present,
) -> Result<ConnectedInfo, CalendarError> {
    let c = &config.scheduler.calendar;
    let secrets_path = credentials_path(c, paths)?;
    let tokens: Arc<dyn TokenStore> = Arc::new(KeychainTokens::new(store.clone()));
    calendar::connect(&secrets_path, tokens, &endpoints(), calendars(c), present).await
}

/// `calendar disconnect`: true when a token was stored. Blocking.
pub fn disconnect(store: &SecretStore) -> Result<bool, SecretError> {
    store.delete(TOKEN_ACCOUNT)
}

/// Whether a token is stored. Blocking.
pub fn is_connected(store: &SecretStore) -> Result<bool, SecretError> {
    Ok(store.get(TOKEN_ACCOUNT)?.is_some())
}

/// `calendar status`: one fetch of the next 24 hours' busy blocks.
pub async fn fetch_busy(
    config: &Config,
    paths: &Paths,
    store: &SecretStore,
) -> Result<Vec<BusyBlock>, CalendarError> {
    let c = &config.scheduler.calendar;
    let secrets_path = credentials_path(c, paths)?;
    let secret = calendar::read_client_secret(&secrets_path)?;
    let tokens: Arc<dyn TokenStore> = Arc::new(KeychainTokens::new(store.clone()));
    let client = CalendarClient::new(secret, tokens, &endpoints(), calendars(c))?;
    let now = jiff::Timestamp::now();
    let horizon = jiff::SignedDuration::try_from(calendar::HORIZON).unwrap_or_default();
    client
        .busy_between(now, now.saturating_add(horizon).unwrap_or(now))
        .await
}
