//! Google Calendar as a window source: meetings the user accepted or organised open a
//! window for as long as they last.
//!
//! - [`connect`] runs the OAuth installed flow (loopback redirect, read-only scope) once and
//!   hands the token to a [`TokenStore`] (the OS keychain in the app; never a file of ours).
//! - [`CalendarPoller`] fetches the configured calendars for the next 24 hours on an
//!   interval and fills the cache [`CalendarSource`] reads; refreshing the access token
//!   never falls back to an interactive flow (a revoked token makes the source
//!   `Unavailable` until the user connects again).
//! - [`busy_blocks`] decides which events count: opaque, not cancelled, not all-day, and
//!   accepted or organised by the user.

mod auth;
mod client;
mod connect;
mod error;
mod events;
mod poller;
mod source;
mod token;

pub use auth::{RefreshingAuth, read_client_secret};
pub use client::CalendarClient;
pub use connect::{CONNECT_TIMEOUT, ConnectedInfo, Present, ShowUrl, connect};
pub use error::CalendarError;
pub use events::{BusyBlock, busy_blocks, is_busy};
pub use poller::CalendarPoller;
pub use source::{CalendarSource, CalendarState};
pub use token::{StoredToken, TokenStore, TokenStoreAdapter, import_legacy_token};

/// Read-only access to the user's calendars; nothing else is asked for.
pub const SCOPE: &str = "https://www.googleapis.com/auth/calendar.readonly";

/// How far ahead a fetch looks.
pub const HORIZON: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Where the Calendar API lives. The OAuth endpoints (`auth_uri`, `token_uri`) come from
/// the client secrets file, so a test's secrets file points them at a local fake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    /// `https://www.googleapis.com/calendar/v3/` by default (ends with `/`).
    pub calendar_base_url: String,
    /// `https://www.googleapis.com/` by default (ends with `/`).
    pub calendar_root_url: String,
}

impl Default for Endpoints {
    fn default() -> Self {
        Self::google()
    }
}

impl Endpoints {
    pub fn google() -> Self {
        Self::with_root("https://www.googleapis.com/")
    }

    /// Both URLs under `root` (`http://127.0.0.1:PORT/` for a fake): the API at
    /// `<root>calendar/v3/`.
    pub fn with_root(root: &str) -> Self {
        let root = if root.ends_with('/') {
            root.to_owned()
        } else {
            format!("{root}/")
        };
        Self {
            calendar_base_url: format!("{root}calendar/v3/"),
            calendar_root_url: root,
        }
    }
}
