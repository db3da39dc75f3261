//! The OS keychain (macOS Keychain, Windows Credential Manager, Secret Service) via `keyring`.
//! Every call blocks (D-Bus round trips on Linux); async callers go through `spawn_blocking`.

use keyring::{Entry, Error};

use super::SecretError;

/// Account used to find out whether a keychain answers at all.
const PROBE_ACCOUNT: &str = "metaclaw.probe";

pub(super) fn get(service: &str, account: &str) -> Result<Option<String>, SecretError> {
    match entry(service, account)?.get_password() {
        Ok(v) => Ok(Some(v)),
        Err(Error::NoEntry) => Ok(None),
        Err(e) => Err(failure(account, &e)),
    }
}

pub(super) fn set(service: &str, account: &str, value: &str) -> Result<(), SecretError> {
    entry(service, account)?
        .set_password(value)
        .map_err(|e| failure(account, &e))
}

/// True when an entry existed.
pub(super) fn delete(service: &str, account: &str) -> Result<bool, SecretError> {
    match entry(service, account)?.delete_credential() {
        Ok(()) => Ok(true),
        Err(Error::NoEntry) => Ok(false),
        Err(e) => Err(failure(account, &e)),
    }
}

/// `Err` (with the reason) when there is no usable keychain: no Secret Service on the bus,
/// a locked or missing collection, no platform store.
pub(super) fn probe(service: &str) -> Result<(), String> {
    let entry = Entry::new(service, PROBE_ACCOUNT).map_err(|e| describe(&e))?;
    match entry.get_password() {
        Ok(_) | Err(Error::NoEntry) => Ok(()),
        Err(e) => Err(describe(&e)),
    }
}

fn entry(service: &str, account: &str) -> Result<Entry, SecretError> {
    Entry::new(service, account).map_err(|e| failure(account, &e))
}

fn failure(account: &str, e: &Error) -> SecretError {
    SecretError::Keychain {
        account: account.to_owned(),
        message: describe(e),
    }
}

/// Never includes secret material: `BadEncoding` carries the stored bytes.
fn describe(e: &Error) -> String {
    match e {
        Error::BadEncoding(_) => "the stored value is not valid UTF-8".into(),
        other => other.to_string(),
    }
}
