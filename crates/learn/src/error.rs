//! Errors of the backend clients. Each says in plain words what failed; none ever contains
//! the API key (messages from a backend are scrubbed of it before they are kept).

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// The backend refused the credentials (HTTP 401/403).
    #[error("{backend} refused the API key while {op} (HTTP {status}); check the key in settings")]
    Auth {
        backend: &'static str,
        op: String,
        status: u16,
    },
    /// The backend could not be reached, or the connection broke, after the retries allowed.
    #[error("could not reach {backend} while {op}: {detail}")]
    Network {
        backend: &'static str,
        op: String,
        detail: String,
    },
    /// The backend answered with an error (an HTTP error status or a failed request).
    #[error("{backend} failed while {op}{}: {message}", status_text(*.status))]
    Backend {
        backend: &'static str,
        op: String,
        status: Option<u16>,
        message: String,
    },
    /// The result of a submitted request expired on the server before it was collected.
    #[error(
        "{backend} dropped the result of {op} before it was collected (expired); the request may or may not have run"
    )]
    Expired { backend: &'static str, op: String },
    /// The request did not complete in time.
    #[error("{backend} did not finish {op} within {}s", .after.as_secs())]
    TimedOut {
        backend: &'static str,
        op: String,
        after: Duration,
    },
    /// The client was shut down while the request was in flight.
    #[error("{op} was cancelled because the {backend} client was shut down")]
    Cancelled { backend: &'static str, op: String },
    /// The learning database failed or refused a row (a malformed sample).
    #[error("learning database: {0}")]
    Store(#[from] metaclaw_store::StoreError),
    /// The judge or the distillation teacher failed.
    #[error("{service} failed: {detail}")]
    Service {
        service: &'static str,
        detail: String,
        transient: bool,
    },
    /// The caller passed something the backend cannot accept (checked before sending).
    #[error("invalid {what}: {detail}")]
    Invalid { what: &'static str, detail: String },
}

fn status_text(status: Option<u16>) -> String {
    status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
}

impl LearnError {
    pub(crate) fn invalid(what: &'static str, detail: impl Into<String>) -> Self {
        Self::Invalid {
            what,
            detail: detail.into(),
        }
    }

    /// Whether a later attempt might succeed without any change by the user (network
    /// trouble, server errors, time-outs); auth and invalid input will not heal themselves.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Network { .. } | Self::TimedOut { .. } | Self::Expired { .. } => true,
            // A failed request the server blames on the input will fail the same way again.
            Self::Backend {
                status: None,
                message,
                ..
            } => !message.contains("category: user"),
            Self::Backend {
                status: Some(s), ..
            } => *s >= 500 || *s == 429,
            Self::Service { transient, .. } => *transient,
            Self::Auth { .. } | Self::Cancelled { .. } | Self::Invalid { .. } | Self::Store(_) => {
                false
            }
        }
    }
}

impl LearnError {
    /// Whether the server answered a submission with a refusal, so it certainly did not run
    /// (unlike a broken connection, after which it may have).
    pub(crate) fn is_refusal(&self) -> bool {
        matches!(
            self,
            Self::Auth { .. }
                | Self::Backend {
                    status: Some(_),
                    ..
                }
        )
    }
}

/// Removes every occurrence of `secret` from `text` (backends sometimes echo the key).
pub(crate) fn scrub(text: &str, secret: &str) -> String {
    if secret.len() < 4 {
        return text.to_owned();
    }
    text.replace(secret, "[redacted]")
}
