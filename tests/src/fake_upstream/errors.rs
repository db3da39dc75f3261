//! Error responses in each protocol's own shape: OpenAI `{"error":{"message","type","param",
//! "code"}}`, Anthropic `{"type":"error","error":{"type","message"},"request_id"}`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::fault::Fault;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    OpenAi,
    Anthropic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidRequest,
    Authentication,
    NotFound,
    RateLimit,
    Server,
    Overloaded,
}

/// HTTP status for the overloaded error; Anthropic's non-standard 529.
pub const STATUS_OVERLOADED: u16 = 529;
/// `Retry-After` seconds the 429 fault carries.
pub const RETRY_AFTER_SECS: u32 = 7;

impl ErrorKind {
    fn status(self) -> StatusCode {
        match self {
            Self::InvalidRequest => StatusCode::BAD_REQUEST,
            Self::Authentication => StatusCode::UNAUTHORIZED,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::RateLimit => StatusCode::TOO_MANY_REQUESTS,
            Self::Server => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Overloaded => {
                StatusCode::from_u16(STATUS_OVERLOADED).unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
            }
        }
    }

    /// OpenAI's `(type, code)` pair.
    fn openai(self) -> (&'static str, Option<&'static str>) {
        match self {
            Self::InvalidRequest => ("invalid_request_error", None),
            Self::Authentication => ("invalid_request_error", Some("invalid_api_key")),
            Self::NotFound => ("invalid_request_error", Some("unknown_url")),
            Self::RateLimit => ("requests", Some("rate_limit_exceeded")),
            Self::Server => ("server_error", None),
            Self::Overloaded => ("overloaded_error", Some("overloaded")),
        }
    }

    fn anthropic(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request_error",
            Self::Authentication => "authentication_error",
            Self::NotFound => "not_found_error",
            Self::RateLimit => "rate_limit_error",
            Self::Server => "api_error",
            Self::Overloaded => "overloaded_error",
        }
    }
}

/// The JSON error body alone (also used for Anthropic's in-stream `error` event).
pub fn error_body(proto: Protocol, kind: ErrorKind, message: &str) -> serde_json::Value {
    match proto {
        Protocol::OpenAi => {
            let (ty, code) = kind.openai();
            json!({ "error": { "message": message, "type": ty, "param": null, "code": code } })
        }
        Protocol::Anthropic => json!({
            "type": "error",
            "error": { "type": kind.anthropic(), "message": message },
            "request_id": "req_fake",
        }),
    }
}

pub fn error_response(proto: Protocol, kind: ErrorKind, message: &str) -> Response {
    let mut resp = (kind.status(), axum::Json(error_body(proto, kind, message))).into_response();
    if kind == ErrorKind::RateLimit {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    }
    resp
}

/// The response an error fault produces, or `None` for faults that shape a normal reply.
pub fn fault_response(proto: Protocol, fault: Fault) -> Option<Response> {
    let (kind, message) = match fault {
        Fault::RateLimited => (ErrorKind::RateLimit, "Rate limit reached for requests"),
        Fault::ServerError => (
            ErrorKind::Server,
            "The server had an error while processing your request",
        ),
        Fault::Overloaded => (ErrorKind::Overloaded, "Overloaded"),
        Fault::Unauthorized => (ErrorKind::Authentication, "Incorrect API key provided"),
        _ => return None,
    };
    Some(error_response(proto, kind, message))
}
