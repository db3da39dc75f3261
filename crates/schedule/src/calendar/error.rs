//! What can go wrong talking to Google. No variant ever carries a token or a client secret.

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalendarError {
    #[error("cannot read the Google client secrets {}: {message}", path.display())]
    Secrets { path: PathBuf, message: String },
    #[error("Google Calendar is not connected: run `metaclaw scheduler calendar connect`")]
    NotConnected,
    #[error(
        "Google refused the calendar token (revoked?): run `metaclaw scheduler calendar connect`"
    )]
    Revoked,
    #[error("cannot reach Google: {0}")]
    Network(String),
    #[error("Google answered {status}: {message}")]
    Api { status: u16, message: String },
    #[error("the calendar token store failed: {0}")]
    Store(String),
    #[error("Google sign-in failed: {0}")]
    SignIn(String),
    #[error("Google sign-in was not completed within {} minutes", .0 / 60)]
    Timeout(u64),
}
