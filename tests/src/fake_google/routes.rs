//! The endpoints: consent page, token endpoint, events list.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use serde_json::json;

use super::state::{CalendarRequest, Pending, Shared, TokenRequest};
use super::{CLIENT_ID, CLIENT_SECRET, SCOPE};

type Shared_ = Arc<Shared>;

pub(super) fn router(shared: Shared_) -> Router {
    Router::new()
        .route("/o/oauth2/auth", get(consent))
        .route("/token", post(token))
        .route("/calendar/v3/calendars/{id}/events", get(events))
        .layer(axum::middleware::map_response(close_connection))
        .with_state(shared)
}

async fn close_connection(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

/// The consent page, already consented: redirects to the loopback `redirect_uri`.
async fn consent(
    State(shared): State<Shared_>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if q.get("client_id").map(String::as_str) != Some(CLIENT_ID) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client",
            "The OAuth client was not found.",
        );
    }
    if q.get("response_type").map(String::as_str) != Some("code") {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_response_type",
            "response_type must be code",
        );
    }
    if !q
        .get("scope")
        .is_some_and(|s| s.split(' ').any(|s| s == SCOPE))
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "the calendar scope was not requested",
        );
    }
    let Some(redirect_uri) = q.get("redirect_uri").cloned() else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Missing required parameter: redirect_uri",
        );
    };
    // Desktop clients may only redirect to the loopback interface.
    let loopback = ["http://localhost:", "http://127.0.0.1:", "http://[::1]:"]
        .iter()
        .any(|p| redirect_uri.starts_with(p));
    if !loopback {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "redirect_uri must be a loopback address",
        );
    }
    let code = shared.with(|s| {
        let code = s.next_id("4/fake-code");
        s.codes.insert(
            code.clone(),
            Pending {
                redirect_uri: redirect_uri.clone(),
            },
        );
        code
    });
    let mut location = format!(
        "{redirect_uri}{}code={}&scope={}",
        if redirect_uri.contains('?') { '&' } else { '?' },
        encode(&code),
        encode(SCOPE)
    );
    if let Some(state) = q.get("state") {
        location.push_str(&format!("&state={}", encode(state)));
    }
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

async fn token(State(shared): State<Shared_>, body: Bytes) -> Response {
    let form = decode_form(&body);
    let grant_type = form.get("grant_type").cloned().unwrap_or_default();
    let response = token_answer(&shared, &form, &grant_type);
    shared.with(|s| {
        s.token_requests.push(TokenRequest {
            grant_type,
            status: response.status().as_u16(),
        });
    });
    response
}

fn token_answer(shared: &Shared, form: &HashMap<String, String>, grant_type: &str) -> Response {
    if form.get("client_id").map(String::as_str) != Some(CLIENT_ID)
        || form.get("client_secret").map(String::as_str) != Some(CLIENT_SECRET)
    {
        return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "Unauthorized");
    }
    shared.with(|s| match grant_type {
        "authorization_code" => {
            let code = form.get("code").cloned().unwrap_or_default();
            let Some(pending) = s.codes.remove(&code) else {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "Malformed auth code.",
                );
            };
            if form.get("redirect_uri") != Some(&pending.redirect_uri) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "redirect_uri_mismatch",
                    "Bad Request",
                );
            }
            s.revoked = false;
            let refresh = s.next_id("1//fake-refresh");
            s.refresh.insert(refresh.clone());
            let access = s.issue_access();
            Json(json!({
                "access_token": access,
                "expires_in": s.access_ttl.as_secs(),
                "refresh_token": refresh,
                "scope": SCOPE,
                "token_type": "Bearer",
            }))
            .into_response()
        }
        "refresh_token" => {
            let refresh = form.get("refresh_token").cloned().unwrap_or_default();
            if s.revoked || !s.refresh.contains(&refresh) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "Token has been expired or revoked.",
                );
            }
            let access = s.issue_access();
            Json(json!({
                "access_token": access,
                "expires_in": s.access_ttl.as_secs(),
                "scope": SCOPE,
                "token_type": "Bearer",
            }))
            .into_response()
        }
        _ => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "Invalid grant_type",
        ),
    })
}

fn api_error(status: StatusCode, message: &str, reason: &str) -> Response {
    (
        status,
        Json(json!({"error": {
            "code": status.as_u16(),
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
            "status": reason,
        }})),
    )
        .into_response()
}

async fn events(
    State(shared): State<Shared_>,
    Path(calendar): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    let response = shared.with(|s| {
        if !s.access_valid(&bearer) {
            return api_error(
                StatusCode::UNAUTHORIZED,
                "Request had invalid authentication credentials.",
                "UNAUTHENTICATED",
            );
        }
        if s.fail_calendar {
            return api_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Backend Error",
                "backendError",
            );
        }
        let Some(all) = s.events.get(&calendar) else {
            return api_error(StatusCode::NOT_FOUND, "Not Found", "notFound");
        };
        let start: usize = query
            .get("pageToken")
            .and_then(|p| p.strip_prefix("page-"))
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let end = (start + s.page_size).min(all.len());
        let items: Vec<_> = all.get(start..end).unwrap_or_default().to_vec();
        let mut body = json!({
            "kind": "calendar#events",
            "summary": calendar,
            "timeZone": "UTC",
            "accessRole": "owner",
            "items": items,
        });
        if end < all.len() {
            body["nextPageToken"] = json!(format!("page-{end}"));
        }
        Json(body).into_response()
    });
    shared.with(|s| {
        s.calendar_requests.push(CalendarRequest {
            calendar,
            query,
            status: response.status().as_u16(),
        });
    });
    response
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b));
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn decode_form(body: &[u8]) -> HashMap<String, String> {
    fn decode(s: &str) -> String {
        let bytes = s.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < bytes.len() => {
                    let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                    match u8::from_str_radix(hex, 16) {
                        Ok(b) => {
                            out.push(b);
                            i += 2;
                        }
                        Err(_) => out.push(b'%'),
                    }
                }
                b => out.push(b),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    String::from_utf8_lossy(body)
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}
