//! API keys and tokens: environment, OS keychain, a 0600 fallback file, and (read-only,
//! lowest priority) plaintext values left in a legacy `config.yaml`.
//!
//! Keychain calls block (D-Bus on Linux) and the Secret Service backend must not be driven
//! from inside a tokio worker: async code uses the `*_async` wrappers, which run the call on
//! the blocking pool.

mod file;
mod keychain;
mod secret;
mod token;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Once, OnceLock};

pub use secret::{Secret, mask};
pub use token::random_token;

use crate::paths::Paths;
use file::SecretFile;

/// Forces a backend: `file`, `keychain`, or `auto` (the default: keychain when one answers).
pub const BACKEND_ENV: &str = "METACLAW_SECRET_BACKEND";

/// Account of the key agents present to the proxy.
pub const PROXY_KEY: &str = "proxy.api_key";

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("invalid {BACKEND_ENV} value `{0}` (expected file, keychain or auto)")]
    BadBackend(String),
    #[error("keychain error for `{account}`: {message}")]
    Keychain { account: String, message: String },
    #[error("secrets file {}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error("refusing to store an empty value for `{0}`; unset it instead")]
    Empty(String),
    #[error("secret store task failed: {0}")]
    Task(String),
}

/// Where a value was found, for `metaclaw status` and `config show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretSource {
    Env,
    Keychain,
    File,
    Config,
}

impl fmt::Display for SecretSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Env => "env",
            Self::Keychain => "keychain",
            Self::File => "file",
            Self::Config => "config",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    Auto,
    Keychain,
    File,
}

impl BackendChoice {
    /// From [`BACKEND_ENV`]; unset or empty means `Auto`.
    pub fn from_env() -> Result<Self, SecretError> {
        match std::env::var(BACKEND_ENV) {
            Ok(v) => Self::parse(&v),
            Err(_) => Ok(Self::Auto),
        }
    }

    pub fn parse(s: &str) -> Result<Self, SecretError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Self::Auto),
            "keychain" => Ok(Self::Keychain),
            "file" => Ok(Self::File),
            _ => Err(SecretError::BadBackend(s.to_owned())),
        }
    }
}

/// Where writes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Keychain,
    File,
}

/// Cheap to clone; clones share the backend decision.
#[derive(Clone)]
pub struct SecretStore {
    inner: Arc<Inner>,
    legacy: Arc<BTreeMap<String, Secret>>,
}

struct Inner {
    service: String,
    file: SecretFile,
    choice: BackendChoice,
    backend: OnceLock<Backend>,
    env: Env,
}

enum Env {
    Process,
    #[cfg(test)]
    Fixed(BTreeMap<String, String>),
}

impl fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretStore")
            .field("service", &self.inner.service)
            .field("choice", &self.inner.choice)
            .field("legacy_accounts", &self.legacy.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl SecretStore {
    /// The store for `paths`, backend chosen by [`BACKEND_ENV`].
    pub fn open(paths: &Paths) -> Result<Self, SecretError> {
        Ok(Self::new(paths, BackendChoice::from_env()?))
    }

    pub fn new(paths: &Paths, choice: BackendChoice) -> Self {
        Self::build(paths, choice, Env::Process)
    }

    fn build(paths: &Paths, choice: BackendChoice, env: Env) -> Self {
        Self {
            inner: Arc::new(Inner {
                service: service_name(paths),
                file: SecretFile::new(&paths.secrets_fallback_file),
                choice,
                backend: OnceLock::new(),
                env,
            }),
            legacy: Arc::new(BTreeMap::new()),
        }
    }

    /// Adds plaintext secrets found in `config.yaml` as the lowest-priority source.
    pub fn with_legacy(mut self, legacy: BTreeMap<String, Secret>) -> Self {
        self.legacy = Arc::new(legacy);
        self
    }

    /// Keychain service name: `metaclaw` for the default home, `metaclaw:<home>` otherwise, so
    /// separate homes (and tests) never share entries.
    pub fn service(&self) -> &str {
        &self.inner.service
    }

    /// Where writes go. In `Auto` the first call probes the keychain (blocking).
    pub fn backend(&self) -> Backend {
        *self.inner.backend.get_or_init(|| match self.inner.choice {
            BackendChoice::Keychain => Backend::Keychain,
            BackendChoice::File => Backend::File,
            BackendChoice::Auto => match keychain::probe(&self.inner.service) {
                Ok(()) => Backend::Keychain,
                Err(reason) => {
                    warn_file_fallback(&self.inner.file, &reason);
                    Backend::File
                }
            },
        })
    }

    /// The value and where it came from: environment, keychain, fallback file, legacy config.
    pub fn lookup(&self, account: &str) -> Result<Option<(Secret, SecretSource)>, SecretError> {
        if let Some(v) = self.env_value(account) {
            return Ok(Some((Secret::new(v), SecretSource::Env)));
        }
        if self.backend() == Backend::Keychain
            && let Some(v) = keychain::get(&self.inner.service, account)?
        {
            return Ok(Some((Secret::new(v), SecretSource::Keychain)));
        }
        if let Some(v) = self.inner.file.get(account)? {
            return Ok(Some((Secret::new(v), SecretSource::File)));
        }
        Ok(self
            .legacy
            .get(account)
            .map(|s| (s.clone(), SecretSource::Config)))
    }

    pub fn get(&self, account: &str) -> Result<Option<Secret>, SecretError> {
        Ok(self.lookup(account)?.map(|(s, _)| s))
    }

    pub fn source_of(&self, account: &str) -> Result<Option<SecretSource>, SecretError> {
        Ok(self.lookup(account)?.map(|(_, src)| src))
    }

    /// Stores `value` in the backend and says which one.
    pub fn set(&self, account: &str, value: &str) -> Result<SecretSource, SecretError> {
        if value.is_empty() {
            return Err(SecretError::Empty(account.to_owned()));
        }
        match self.backend() {
            Backend::Keychain => {
                keychain::set(&self.inner.service, account, value)?;
                Ok(SecretSource::Keychain)
            }
            Backend::File => {
                self.inner.file.set(account, value)?;
                Ok(SecretSource::File)
            }
        }
    }

    /// Removes the account from the keychain and the fallback file; true if it was in either.
    /// Environment variables and legacy config values are outside the store's reach.
    pub fn delete(&self, account: &str) -> Result<bool, SecretError> {
        let in_keychain =
            self.backend() == Backend::Keychain && keychain::delete(&self.inner.service, account)?;
        let in_file = self.inner.file.delete(account)?;
        Ok(in_keychain || in_file)
    }

    pub async fn get_async(&self, account: &str) -> Result<Option<Secret>, SecretError> {
        let account = account.to_owned();
        self.blocking(move |s| s.get(&account)).await
    }

    pub async fn set_async(
        &self,
        account: &str,
        value: Secret,
    ) -> Result<SecretSource, SecretError> {
        let account = account.to_owned();
        self.blocking(move |s| s.set(&account, value.expose()))
            .await
    }

    pub async fn delete_async(&self, account: &str) -> Result<bool, SecretError> {
        let account = account.to_owned();
        self.blocking(move |s| s.delete(&account)).await
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Self) -> Result<T, SecretError> + Send + 'static,
    ) -> Result<T, SecretError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(|e| SecretError::Task(e.to_string()))?
    }

    fn env_value(&self, account: &str) -> Option<String> {
        let name = env_var(account);
        let value = match &self.inner.env {
            Env::Process => std::env::var(&name).ok(),
            #[cfg(test)]
            Env::Fixed(map) => map.get(&name).cloned(),
        };
        value.filter(|v| !v.is_empty())
    }
}

/// `METACLAW_` + the account uppercased, every other character than a letter or digit as `_`:
/// `llm.api_key` → `METACLAW_LLM_API_KEY`.
pub fn env_var(account: &str) -> String {
    let tail: String = account
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("METACLAW_{tail}")
}

/// The existing proxy key, or a new random one (`mc-` + 32 URL-safe characters) now stored.
pub fn ensure_proxy_key(store: &SecretStore) -> Result<Secret, SecretError> {
    if let Some(existing) = store.get(PROXY_KEY)? {
        return Ok(existing);
    }
    let key = Secret::new(random_token("mc-"));
    store.set(PROXY_KEY, key.expose())?;
    Ok(key)
}

fn service_name(paths: &Paths) -> String {
    if paths.is_default_home() {
        "metaclaw".into()
    } else {
        format!("metaclaw:{}", paths.home.display())
    }
}

fn warn_file_fallback(file: &SecretFile, reason: &str) {
    static WARNED: Once = Once::new();
    WARNED.call_once(|| {
        tracing::warn!(
            file = %file.path().display(),
            reason,
            "no OS keychain is available; secrets are stored in a file readable only by you"
        );
    });
}

#[cfg(test)]
mod tests;
