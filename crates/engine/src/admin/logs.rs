//! Placeholder: filled in by the admin API work for the desktop UI.

use std::sync::Arc;

use axum::Router;

use super::routes::AdminState;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
}
