//! Where the Google token lives: behind [`TokenStore`] (the OS keychain in the app), stored
//! as a small JSON document, and a yup-oauth2 [`TokenStorage`] adapter over it so the
//! installed flow writes there instead of to a file.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use yup_oauth2::storage::{TokenInfo, TokenStorage, TokenStorageError};

use super::CalendarError;

/// A place for one token document. Implementations may block (keychain calls); async code
/// calls them on the blocking pool.
pub trait TokenStore: Send + Sync {
    fn load(&self) -> Result<Option<String>, String>;
    fn save(&self, token_json: &str) -> Result<(), String>;
    fn delete(&self) -> Result<(), String>;
}

/// The stored document: `{"access_token", "refresh_token", "expires_at"}` (Unix seconds).
/// Deliberately no `Debug`: it holds credentials.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredToken {
    #[serde(default)]
    pub access_token: Option<String>,
    #[serde(default)]
    pub refresh_token: Option<String>,
    #[serde(default)]
    pub expires_at: Option<i64>,
}

impl StoredToken {
    pub fn parse(json: &str) -> Result<Self, CalendarError> {
        serde_json::from_str(json)
            .map_err(|e| CalendarError::Store(format!("the stored token is not readable ({e})")))
    }

    pub fn to_json(&self) -> Result<String, CalendarError> {
        serde_json::to_string(self).map_err(|e| CalendarError::Store(e.to_string()))
    }

    /// An access token usable for at least `margin_secs` more seconds at `now_secs`.
    pub fn fresh_access(&self, now_secs: i64, margin_secs: i64) -> Option<&str> {
        let token = self.access_token.as_deref().filter(|t| !t.is_empty())?;
        match self.expires_at {
            Some(at) if at - margin_secs <= now_secs => None,
            _ => Some(token),
        }
    }

    fn from_info(info: &TokenInfo) -> Self {
        Self {
            access_token: info.access_token.clone(),
            refresh_token: info.refresh_token.clone(),
            expires_at: info.expires_at.map(|t| t.unix_timestamp()),
        }
    }

    fn to_info(&self) -> TokenInfo {
        TokenInfo {
            access_token: self.access_token.clone(),
            refresh_token: self.refresh_token.clone(),
            expires_at: self
                .expires_at
                .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok()),
            id_token: None,
        }
    }
}

/// `load` on the blocking pool.
pub(crate) async fn load(
    store: &Arc<dyn TokenStore>,
) -> Result<Option<StoredToken>, CalendarError> {
    let store = store.clone();
    let json = tokio::task::spawn_blocking(move || store.load())
        .await
        .map_err(|e| CalendarError::Store(e.to_string()))?
        .map_err(CalendarError::Store)?;
    json.as_deref().map(StoredToken::parse).transpose()
}

/// `save` on the blocking pool.
pub(crate) async fn save(
    store: &Arc<dyn TokenStore>,
    token: &StoredToken,
) -> Result<(), CalendarError> {
    let json = token.to_json()?;
    let store = store.clone();
    tokio::task::spawn_blocking(move || store.save(&json))
        .await
        .map_err(|e| CalendarError::Store(e.to_string()))?
        .map_err(CalendarError::Store)
}

/// yup-oauth2 storage over a [`TokenStore`]. One token for the one scope MetaClaw asks for,
/// so scopes are not part of the key.
pub struct TokenStoreAdapter {
    store: Arc<dyn TokenStore>,
    /// When false, `get` answers nothing, so the installed flow always asks the user (a
    /// `connect` must not silently reuse an old token).
    read: bool,
}

impl TokenStoreAdapter {
    pub fn new(store: Arc<dyn TokenStore>) -> Self {
        Self { store, read: true }
    }

    /// Saves what the flow obtains but never offers the stored token back.
    pub fn write_only(store: Arc<dyn TokenStore>) -> Self {
        Self { store, read: false }
    }
}

#[async_trait::async_trait]
impl TokenStorage for TokenStoreAdapter {
    async fn set(&self, _scopes: &[&str], token: TokenInfo) -> Result<(), TokenStorageError> {
        save(&self.store, &StoredToken::from_info(&token))
            .await
            .map_err(|e| TokenStorageError::Other(e.to_string().into()))
    }

    async fn get(&self, _scopes: &[&str]) -> Option<TokenInfo> {
        if !self.read {
            return None;
        }
        match load(&self.store).await {
            Ok(t) => t.map(|t| t.to_info()),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the stored calendar token");
                None
            }
        }
    }
}

/// A token file as earlier versions wrote it (google-auth's authorized-user JSON:
/// `token`, `refresh_token`, `expiry`, plus the client id and secret, which are not kept),
/// turned into the stored document. `None` when the file holds no refresh token.
pub fn import_legacy_token(file_json: &str) -> Result<Option<StoredToken>, CalendarError> {
    #[derive(Deserialize)]
    struct Legacy {
        #[serde(default)]
        token: Option<String>,
        #[serde(default)]
        access_token: Option<String>,
        #[serde(default)]
        refresh_token: Option<String>,
        #[serde(default)]
        expiry: Option<String>,
    }
    let legacy: Legacy = serde_json::from_str(file_json).map_err(|e| {
        CalendarError::Store(format!(
            "the legacy token file is not google-auth JSON (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let Some(refresh) = legacy.refresh_token.filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    // Python wrote naive UTC (`2024-05-01T10:00:00.123456`) or with a `Z`.
    let expires_at = legacy.expiry.and_then(|e| {
        let e = e.trim_end_matches('Z');
        let civil: jiff::civil::DateTime = e.parse().ok()?;
        civil
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp().as_second())
    });
    Ok(Some(StoredToken {
        access_token: legacy.token.or(legacy.access_token),
        refresh_token: Some(refresh),
        // Without a known expiry the access token is refreshed before its first use.
        expires_at: Some(expires_at.unwrap_or(0)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_google_auth_files_keep_the_refresh_token_and_drop_the_client_secret() {
        let t = import_legacy_token(
            r#"{"token": "ya29.a", "refresh_token": "1//r", "token_uri": "https://oauth2.googleapis.com/token",
                "client_id": "id", "client_secret": "shh", "scopes": ["s"], "expiry": "2024-05-01T10:00:00.123456Z"}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(t.refresh_token.as_deref(), Some("1//r"));
        assert_eq!(t.access_token.as_deref(), Some("ya29.a"));
        assert_eq!(t.expires_at, Some(1_714_557_600));
        assert!(!t.to_json().unwrap().contains("shh"));
        let naive =
            import_legacy_token(r#"{"refresh_token": "1//r", "expiry": "2024-05-01T10:00:00"}"#)
                .unwrap()
                .unwrap();
        assert_eq!(naive.expires_at, Some(1_714_557_600));
        assert!(
            import_legacy_token(r#"{"token": "ya29.a"}"#)
                .unwrap()
                .is_none()
        );
        assert!(import_legacy_token("not json").is_err());
    }

    #[test]
    fn an_access_token_near_its_expiry_is_not_fresh() {
        let t = StoredToken {
            access_token: Some("a".into()),
            refresh_token: Some("r".into()),
            expires_at: Some(1000),
        };
        assert_eq!(t.fresh_access(900, 60), Some("a"));
        assert_eq!(t.fresh_access(940, 60), None);
        assert_eq!(t.fresh_access(2000, 60), None);
        let no_expiry = StoredToken {
            expires_at: None,
            ..t
        };
        assert_eq!(no_expiry.fresh_access(2000, 60), Some("a"));
    }
}
