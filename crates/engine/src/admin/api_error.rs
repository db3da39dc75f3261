//! The admin API's one error type. Each variant is an HTTP meaning, and every one answers
//! with the body the API has always sent: `{"error": {"message": "..."}}`, plus `field` for
//! a refused form value. Handlers return `Result<_, ApiError>` and use `?`; the `From`
//! impls below say which status each lower error gets. Messages are the errors' own
//! sentences, which name files, keys' accounts and fields, never a key's value.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use metaclaw_memory::MemoryError;
use metaclaw_store::StoreError;
use serde_json::json;
use tokio::task::JoinError;

use super::routes::error;
use crate::config::ConfigError;
use crate::memory::MemoryServiceError;
use crate::paths::PathsError;
use crate::recorder::RecorderError;
use crate::secrets::SecretError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request itself is wrong.
    #[error("{0}")]
    BadRequest(String),
    /// 400 naming the form field refused (settings, setup).
    #[error("{}", .0.message)]
    Invalid(Invalid),
    #[error("{0}")]
    NotFound(String),
    /// 409: the feature is off, or the thing changed meanwhile.
    #[error("{0}")]
    Conflict(String),
    /// 422: the thing is there but cannot be changed safely (an agent's broken config).
    #[error("{0}")]
    Unprocessable(String),
    /// 503: a queue is full or a feature is not running; trying again may work.
    #[error("{0}")]
    Unavailable(String),
    /// 502: a service MetaClaw called refused.
    #[error("{0}")]
    BadGateway(String),
    /// 504: a service MetaClaw called did not answer in time.
    #[error("{0}")]
    GatewayTimeout(String),
    #[error("{0}")]
    Internal(String),
}

/// A refused value: which field, and why in a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: String,
    pub message: String,
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) | ApiError::Invalid(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::BadGateway(_) => StatusCode::BAD_GATEWAY,
            ApiError::GatewayTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// A 500 with `e`'s own message.
    pub fn internal(e: impl std::fmt::Display) -> Self {
        ApiError::Internal(e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match self {
            ApiError::Invalid(i) => (
                status,
                Json(json!({"error": {"message": i.message, "field": i.field}})),
            )
                .into_response(),
            other => error(status, &other.to_string()),
        }
    }
}

/// A unit that is not there, changed meanwhile, or a malformed request keep their meaning;
/// anything else is the server's.
impl From<MemoryError> for ApiError {
    fn from(e: MemoryError) -> Self {
        let message = e.to_string();
        match e {
            MemoryError::NotFound(_) => ApiError::NotFound(message),
            MemoryError::Conflict { .. } => ApiError::Conflict(message),
            MemoryError::Invalid(_) => ApiError::BadRequest(message),
            MemoryError::Sql(_) | MemoryError::Io(_) => ApiError::Internal(message),
        }
    }
}

/// The errors below are the server's whatever their cause: the request was fine.
macro_rules! internal_from {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for ApiError {
            fn from(e: $t) -> Self {
                ApiError::internal(e)
            }
        }
    )*};
}

internal_from!(
    StoreError,
    JoinError,
    MemoryServiceError,
    PathsError,
    SecretError,
    ConfigError,
    RecorderError,
    crate::storage::StorageError,
);

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;
    use serde_json::Value;

    async fn answer(e: ApiError) -> (StatusCode, Value) {
        let response = e.into_response();
        let status = response.status();
        let body = to_bytes(response.into_body(), 1 << 16).await.unwrap();
        (status, serde_json::from_slice(&body).unwrap())
    }

    #[tokio::test]
    async fn errors_answer_with_their_status_and_the_admin_api_body() {
        let (status, body) = answer(ApiError::Conflict("memory is off".into())).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(body, json!({"error": {"message": "memory is off"}}));

        let (status, body) = answer(MemoryError::NotFound("m1".into()).into()).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(
            body,
            json!({"error": {"message": "no memory unit with id m1"}})
        );

        let invalid = ApiError::Invalid(Invalid {
            field: "proxy.port".into(),
            message: "proxy.port must be a whole number of 0 or more.".into(),
        });
        let (status, body) = answer(invalid).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(
            body,
            json!({"error": {"message": "proxy.port must be a whole number of 0 or more.", "field": "proxy.port"}})
        );

        let store = StoreError::Invalid {
            what: "turn",
            detail: "no session".into(),
        };
        let (status, body) = answer(store.into()).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            body,
            json!({"error": {"message": "invalid turn: no session"}})
        );
    }
}
