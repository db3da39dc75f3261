//! Errors answered to agents, in the shape of the route's protocol (docs/http-api.md,
//! Errors).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use metaclaw_wire::errors::{anthropic_error, openai_error};

use crate::seams::Protocol;

/// An error produced by MetaClaw itself (not passed through from an upstream).
#[derive(Debug)]
pub struct ApiError {
    pub protocol: Protocol,
    pub status: StatusCode,
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidRequest,
    Authentication,
    Permission,
    NotFound,
    TooLarge,
    /// The upstream's 429.
    RateLimited,
    /// The upstream is overloaded (Anthropic's 529, a 503).
    Overloaded,
    Upstream,
    Timeout,
    NotConfigured,
}

impl ErrorKind {
    fn openai_type(self) -> &'static str {
        match self {
            ErrorKind::InvalidRequest | ErrorKind::TooLarge | ErrorKind::NotFound => {
                "invalid_request_error"
            }
            ErrorKind::Authentication => "authentication_error",
            ErrorKind::Permission => "permission_error",
            ErrorKind::RateLimited => "rate_limit_error",
            ErrorKind::Overloaded => "server_error",
            ErrorKind::Upstream | ErrorKind::Timeout | ErrorKind::NotConfigured => "api_error",
        }
    }

    fn openai_code(self) -> &'static str {
        match self {
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::Authentication => "invalid_api_key",
            ErrorKind::Permission => "forbidden",
            ErrorKind::NotFound => "not_found",
            ErrorKind::TooLarge => "request_too_large",
            ErrorKind::RateLimited => "rate_limit_exceeded",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::Upstream => "upstream_error",
            ErrorKind::Timeout => "upstream_timeout",
            ErrorKind::NotConfigured => "not_configured",
        }
    }

    fn anthropic_type(self) -> &'static str {
        match self {
            ErrorKind::InvalidRequest => "invalid_request_error",
            ErrorKind::Authentication => "authentication_error",
            ErrorKind::Permission => "permission_error",
            ErrorKind::NotFound => "not_found_error",
            ErrorKind::TooLarge => "request_too_large",
            ErrorKind::RateLimited => "rate_limit_error",
            ErrorKind::Overloaded => "overloaded_error",
            ErrorKind::Upstream | ErrorKind::NotConfigured => "api_error",
            ErrorKind::Timeout => "timeout_error",
        }
    }
}

impl ApiError {
    pub fn new(
        protocol: Protocol,
        status: StatusCode,
        kind: ErrorKind,
        message: impl Into<String>,
    ) -> Self {
        ApiError {
            protocol,
            status,
            kind,
            message: message.into(),
        }
    }

    pub fn bad_request(protocol: Protocol, message: impl Into<String>) -> Self {
        Self::new(
            protocol,
            StatusCode::BAD_REQUEST,
            ErrorKind::InvalidRequest,
            message,
        )
    }

    /// The JSON body in the protocol's error shape.
    pub fn body(&self) -> serde_json::Value {
        match self.protocol {
            Protocol::Openai => openai_error(
                &self.message,
                self.kind.openai_type(),
                Some(self.kind.openai_code()),
            ),
            Protocol::Anthropic => anthropic_error(self.kind.anthropic_type(), &self.message),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.body().to_string();
        let mut resp = (self.status, body).into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        resp
    }
}
