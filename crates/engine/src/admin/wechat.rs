//! `GET /api/wechat`: the WeChat channel's state, with the QR code to scan while a login
//! waits; `POST /api/wechat/login`: "Log in to WeChat again" (202: it runs in the
//! background; poll the GET or follow `/api/events`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::wechat::{View, WechatError};

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/wechat", get(show))
        .route("/api/wechat/login", post(login))
}

async fn show(State(state): State<Arc<AdminState>>) -> Result<Json<View>, ApiError> {
    let wechat = state.wechat.clone();
    // Reads OpenClaw's config to tell whether the plugin is installed.
    Ok(Json(
        tokio::task::spawn_blocking(move || wechat.view()).await?,
    ))
}

async fn login(State(state): State<Arc<AdminState>>) -> Result<(StatusCode, Json<View>), ApiError> {
    let (wechat, tasks) = (state.wechat.clone(), state.tasks.clone());
    let view = tokio::task::spawn_blocking(move || wechat.login(&tasks))
        .await?
        .map_err(|e| match e {
            WechatError::NotOpenClaw(_) | WechatError::Busy | WechatError::NotInstalled => {
                ApiError::Conflict(e.to_string())
            }
        })?;
    Ok((StatusCode::ACCEPTED, Json(view)))
}
