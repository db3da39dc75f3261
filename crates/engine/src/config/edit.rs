//! `metaclaw config get|set|unset|show` (and the older `config KEY VALUE`).
//!
//! Edits work on the YAML document the user wrote, not on the effective config, so defaults
//! are never frozen into the file and keys the user wrote stay; the file's comments and
//! layout stay too where the edit allows (see [`super::write`]).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde_yaml_ng::{Mapping, Value};

use super::keys::{self, Kind, Lookup};
use super::write::write_doc;
use super::{Config, ConfigError, de, load};
use crate::paths::Paths;
use crate::secrets::{Secret, SecretSource, SecretStore};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetOutcome {
    /// Written to the config file; `value` is read back from it.
    Written { key: String, value: String },
    /// Stored in the secret store (and removed from the file if it was there in plain text).
    Secret {
        account: String,
        stored_in: SecretSource,
    },
}

impl fmt::Display for SetOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Written { key, value } => write!(f, "Set {key} = {value}"),
            Self::Secret { account, stored_in } => write!(f, "Stored {account} in the {stored_in}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsetOutcome {
    Removed,
    /// The key was not set; nothing changed.
    NotSet,
}

/// The effective value of `key` as text: scalars as is, lists and sections as YAML, secrets
/// masked (`(not set)` when absent).
pub fn get(paths: &Paths, key: &str, store: &SecretStore) -> Result<String, ConfigError> {
    if let Some(account) = keys::secret_account(key) {
        let loaded = Config::load(paths)?;
        return Ok(
            match secret_value(store, &loaded.legacy_secrets, &account)? {
                Some((secret, _)) => secret.masked(),
                None => "(not set)".into(),
            },
        );
    }
    let key = keys::canonical(key);
    if keys::lookup(key).is_none() {
        return Err(unknown(key));
    }
    let config = Config::load(paths)?.config;
    let effective = to_value(&config);
    Ok(keys::walk(&effective, key).map(render).unwrap_or_default())
}

/// Sets `key` from its command-line text, coerced by the key's type and validated like a load.
pub fn set(
    paths: &Paths,
    key: &str,
    value: &str,
    store: &SecretStore,
) -> Result<SetOutcome, ConfigError> {
    if let Some(account) = keys::secret_account(key) {
        let stored_in = store.set(&account, value)?;
        remove_plaintext(paths, &account)?;
        return Ok(SetOutcome::Secret { account, stored_in });
    }
    let key = keys::canonical(key);
    let new = match keys::lookup(key) {
        None => return Err(unknown(key)),
        Some(Lookup::Section(children)) => {
            return Err(ConfigError::Section {
                key: key.to_owned(),
                children,
            });
        }
        Some(Lookup::Leaf(kind)) => coerce(paths, key, kind, value)?,
    };
    let mut doc = read_doc(&paths.config)?;
    for old in keys::aliases_of(key) {
        remove(&mut doc, old);
    }
    insert(&mut doc, key, new).map_err(|message| invalid(paths, key, message))?;
    let config = validate(paths, &doc)?;
    write_doc(&paths.config, &doc)?;
    let value = keys::walk(&to_value(&config), key)
        .map(render)
        .unwrap_or_default();
    Ok(SetOutcome::Written {
        key: key.to_owned(),
        value,
    })
}

/// Removes `key` from the file (its default applies again) or the secret from the store.
pub fn unset(paths: &Paths, key: &str, store: &SecretStore) -> Result<UnsetOutcome, ConfigError> {
    if let Some(account) = keys::secret_account(key) {
        let in_store = store.delete(&account)?;
        let in_file = remove_plaintext(paths, &account)?;
        return Ok(if in_store || in_file {
            UnsetOutcome::Removed
        } else {
            UnsetOutcome::NotSet
        });
    }
    let key = keys::canonical(key);
    if keys::lookup(key).is_none() {
        return Err(unknown(key));
    }
    let mut doc = read_doc(&paths.config)?;
    let mut removed = remove(&mut doc, key);
    for old in keys::aliases_of(key) {
        removed |= remove(&mut doc, old);
    }
    if !removed {
        return Ok(UnsetOutcome::NotSet);
    }
    validate(paths, &doc)?;
    write_doc(&paths.config, &doc)?;
    Ok(UnsetOutcome::Removed)
}

/// The effective config as YAML, secrets masked with where each one comes from.
pub fn show(paths: &Paths, store: &SecretStore) -> Result<String, ConfigError> {
    let loaded = Config::load(paths)?;
    let mut effective = to_value(&loaded.config);
    let describe = |account: &str| -> Result<Value, ConfigError> {
        Ok(Value::String(
            match secret_value(store, &loaded.legacy_secrets, account)? {
                Some((secret, source)) => format!("{} ({source})", secret.masked()),
                None => "(not set)".into(),
            },
        ))
    };
    for key in keys::SECRET_KEYS {
        insert(&mut effective, key, describe(key)?)
            .map_err(|message| invalid(paths, key, message))?;
    }
    if let Some(Value::Sequence(list)) = effective
        .get_mut("llm")
        .and_then(|l| l.get_mut("fallbacks"))
    {
        for (item, fallback) in list.iter_mut().zip(&loaded.config.llm.fallbacks) {
            if let Value::Mapping(m) = item {
                m.insert("api_key".into(), describe(&fallback.key_account())?);
            }
        }
    }
    serde_yaml_ng::to_string(&effective).map_err(|e| ConfigError::Parse {
        path: paths.config.clone(),
        message: e.to_string(),
    })
}

fn secret_value(
    store: &SecretStore,
    legacy: &BTreeMap<String, Secret>,
    account: &str,
) -> Result<Option<(Secret, SecretSource)>, ConfigError> {
    Ok(store.lookup(account)?.or_else(|| {
        legacy
            .get(account)
            .map(|s| (s.clone(), SecretSource::Config))
    }))
}

/// Drops a plaintext copy of a secret from the file; true if there was one.
fn remove_plaintext(paths: &Paths, account: &str) -> Result<bool, ConfigError> {
    let mut doc = read_doc(&paths.config)?;
    let mut removed = remove(&mut doc, account);
    for old in keys::aliases_of(account) {
        removed |= remove(&mut doc, old);
    }
    let fallback = account
        .strip_prefix("llm.fallbacks.")
        .and_then(|r| r.strip_suffix(".api_key"));
    if let Some(name) = fallback
        && let Some(Value::Sequence(list)) = doc.get_mut("llm").and_then(|l| l.get_mut("fallbacks"))
    {
        for item in list.iter_mut() {
            if item.get("name").and_then(Value::as_str) == Some(name)
                && let Value::Mapping(m) = item
            {
                removed |= m.remove("api_key").is_some();
            }
        }
    }
    if removed {
        write_doc(&paths.config, &doc)?;
    }
    Ok(removed)
}

/// Turns the command-line text into a value of the key's schema type.
fn coerce(paths: &Paths, key: &str, kind: Kind, text: &str) -> Result<Value, ConfigError> {
    let bad = |expected: &str| invalid(paths, key, format!("expected {expected}, got `{text}`"));
    let t = text.trim();
    Ok(match kind {
        Kind::Str => Value::String(text.to_owned()),
        Kind::Bool => {
            Value::Bool(de::parse_bool(t).ok_or_else(|| bad("true/false, yes/no or on/off"))?)
        }
        Kind::Int => {
            if let Ok(i) = t.parse::<i64>() {
                Value::Number(i.into())
            } else {
                Value::Number(t.parse::<u64>().map_err(|_| bad("an integer"))?.into())
            }
        }
        Kind::Float => {
            let f = t.parse::<f64>().ok().filter(|f| f.is_finite());
            Value::Number(f.ok_or_else(|| bad("a number"))?.into())
        }
        Kind::List | Kind::Map if t.is_empty() => {
            if kind == Kind::List {
                Value::Sequence(Vec::new())
            } else {
                Value::Mapping(Mapping::new())
            }
        }
        Kind::List => match serde_yaml_ng::from_str(t) {
            Ok(v @ Value::Sequence(_)) => v,
            _ => return Err(bad("a YAML or JSON list such as [a, b]")),
        },
        Kind::Map => match serde_yaml_ng::from_str(t) {
            Ok(v @ Value::Mapping(_)) => v,
            _ => return Err(bad("a YAML or JSON mapping such as {a: b}")),
        },
    })
}

/// The same checks as loading, on the edited document; errors name the offending key.
fn validate(paths: &Paths, doc: &Value) -> Result<Config, ConfigError> {
    let text = serde_yaml_ng::to_string(doc).map_err(|e| invalid(paths, "", e.to_string()))?;
    // Without positions first, so a message names the key rather than a line of the
    // re-serialised text the user never saw.
    if let Err(e) = serde_path_to_error::deserialize::<_, Config>(doc.clone()) {
        return Err(invalid(
            paths,
            &e.path().to_string(),
            e.into_inner().to_string(),
        ));
    }
    Ok(load::parse(&paths.config, &text)?.config)
}

fn read_doc(path: &Path) -> Result<Value, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    match serde_yaml_ng::from_str(&text) {
        Ok(Value::Null) => Ok(Value::Mapping(Mapping::new())),
        Ok(v @ Value::Mapping(_)) => Ok(v),
        Ok(_) => Err(ConfigError::Parse {
            path: path.to_owned(),
            message: "the top level must be a mapping of keys to values".into(),
        }),
        Err(e) => Err(ConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        }),
    }
}

/// Sets a dotted key, creating sections on the way.
fn insert(doc: &mut Value, key: &str, value: Value) -> Result<(), String> {
    let mut node = doc;
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        if node.is_null() {
            *node = Value::Mapping(Mapping::new());
        }
        let Value::Mapping(map) = node else {
            return Err(format!(
                "cannot set `{key}`: `{part}` is under a value that is not a section"
            ));
        };
        if parts.peek().is_none() {
            map.insert(part.into(), value);
            return Ok(());
        }
        node = map.entry(part.into()).or_insert(Value::Null);
    }
    Ok(())
}

/// Removes a dotted key and any section it leaves empty; true if it was present.
fn remove(doc: &mut Value, key: &str) -> bool {
    let Value::Mapping(map) = doc else {
        return false;
    };
    match key.split_once('.') {
        None => map.remove(key).is_some(),
        Some((head, rest)) => {
            let Some(child) = map.get_mut(head) else {
                return false;
            };
            let removed = remove(child, rest);
            if removed && child.as_mapping().is_some_and(Mapping::is_empty) {
                map.remove(head);
            }
            removed
        }
    }
}

fn to_value(config: &Config) -> Value {
    serde_yaml_ng::to_value(config).unwrap_or(Value::Null)
}

fn render(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => String::new(),
        other => serde_yaml_ng::to_string(other)
            .map(|s| s.trim_end().to_owned())
            .unwrap_or_default(),
    }
}

fn unknown(key: &str) -> ConfigError {
    ConfigError::UnknownKey {
        key: key.to_owned(),
        suggestion: keys::closest(key),
    }
}

fn invalid(paths: &Paths, key: &str, message: String) -> ConfigError {
    ConfigError::Invalid {
        path: paths.config.clone(),
        key: key.to_owned(),
        message,
    }
}
