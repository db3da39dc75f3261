//! Plaintext keys out of config files: our own `config.yaml` (the Python MetaClaw used the
//! same path) and a reference config brought in with `--import`, whose settings fill in
//! what ours does not set.

use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};

use super::SetupError;
use super::snapshot::Snapshot;
use crate::config::{self, Config, SetOutcome};
use crate::paths::{Paths, write_private_file};
use crate::secrets::{Secret, SecretSource, SecretStore};

/// What happened to one plaintext secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretMove {
    /// Now in the store, gone from the file.
    Stored {
        account: String,
        stored_in: SecretSource,
    },
    /// The store already held a value, which stays (it was the one in use); the plaintext
    /// copy is gone from the file.
    KeptStored { account: String },
}

/// What [`import_reference`] did.
#[derive(Debug, Clone)]
pub struct Imported {
    pub from: PathBuf,
    /// There was no config of ours: the reference became it.
    pub copied: bool,
    /// Dotted keys taken from the reference because ours did not set them.
    pub added: Vec<String>,
    pub secrets: Vec<SecretMove>,
    /// The reference file was rewritten without its plaintext secrets.
    pub source_cleaned: bool,
}

/// Moves plaintext secrets in our own config into the store and out of the file. A value
/// already in the keychain or secrets file wins, as it did when both were there.
/// Blocking: keychain.
pub fn migrate_own_secrets(
    paths: &Paths,
    store: &SecretStore,
) -> Result<Vec<SecretMove>, SetupError> {
    let loaded = Config::load(paths)?;
    let mut moved = Vec::new();
    for (account, plaintext) in loaded.legacy_secrets {
        // `config::set` stores the value and removes every plaintext copy from the file.
        match stored(store, &account)? {
            Some(kept) => {
                config::set(paths, &account, kept.expose(), store)?;
                moved.push(SecretMove::KeptStored { account });
            }
            None => {
                if let SetOutcome::Secret { stored_in, .. } =
                    config::set(paths, &account, plaintext.expose(), store)?
                {
                    moved.push(SecretMove::Stored { account, stored_in });
                }
            }
        }
    }
    Ok(moved)
}

/// Brings in a config written by the Python MetaClaw: ours is created from it when there is
/// none, else its settings fill in the keys ours does not set. Its plaintext secrets go to
/// the store (ours win where both exist), and are removed from the reference file too, which
/// is rewritten (0600) without them — and without its comments, which the parser drops.
/// Blocking: keychain.
pub fn import_reference(
    paths: &Paths,
    store: &SecretStore,
    from: &Path,
) -> Result<Imported, SetupError> {
    if same_file(from, &paths.config) {
        return Ok(Imported {
            from: from.to_owned(),
            copied: false,
            added: Vec::new(),
            secrets: migrate_own_secrets(paths, store)?,
            source_cleaned: false,
        });
    }
    let text = std::fs::read_to_string(from).map_err(|source| SetupError::Read {
        path: from.to_owned(),
        source,
    })?;
    // The same checks as our own config gets; errors name the reference file and the key.
    let loaded = Config::load(&paths.clone().with_config_file(from))?;
    let mut theirs = parse(from, &text)?;
    strip_secrets(&mut theirs, "");

    let snapshot = Snapshot::take(&paths.config)?;
    let result = merge_into_ours(paths, &theirs, &text, loaded.legacy_secrets.is_empty());
    let (copied, added) = match result {
        Ok(r) => r,
        Err(e) => {
            snapshot.restore();
            return Err(e);
        }
    };
    let mut secrets = Vec::new();
    for (account, plaintext) in &loaded.legacy_secrets {
        secrets.push(move_secret(store, account, plaintext).inspect_err(|_| snapshot.restore())?);
    }
    let source_cleaned = !loaded.legacy_secrets.is_empty();
    if source_cleaned {
        write(from, &theirs)?;
    }
    Ok(Imported {
        from: from.to_owned(),
        copied,
        added,
        secrets,
        source_cleaned,
    })
}

fn move_secret(
    store: &SecretStore,
    account: &str,
    plaintext: &Secret,
) -> Result<SecretMove, SetupError> {
    Ok(match stored(store, account)? {
        Some(_) => SecretMove::KeptStored {
            account: account.to_owned(),
        },
        None => SecretMove::Stored {
            account: account.to_owned(),
            stored_in: store.set(account, plaintext.expose())?,
        },
    })
}

/// Writes our config from the reference (stripped of secrets); returns (copied, keys added).
fn merge_into_ours(
    paths: &Paths,
    theirs: &Value,
    text: &str,
    no_secrets: bool,
) -> Result<(bool, Vec<String>), SetupError> {
    let (copied, added) = if paths.config.exists() {
        let ours_text =
            std::fs::read_to_string(&paths.config).map_err(|source| SetupError::Read {
                path: paths.config.clone(),
                source,
            })?;
        let mut ours = parse(&paths.config, &ours_text)?;
        let mut added = Vec::new();
        if let (Value::Mapping(o), Value::Mapping(t)) = (&mut ours, theirs) {
            fill_missing(o, t, "", &mut added);
        }
        if !added.is_empty() {
            write(&paths.config, &ours)?;
        }
        (false, added)
    } else if no_secrets {
        // Verbatim, comments and all.
        write_private_file(&paths.config, text.as_bytes()).map_err(|source| SetupError::Write {
            path: paths.config.clone(),
            source,
        })?;
        (true, Vec::new())
    } else {
        write(&paths.config, theirs)?;
        (true, Vec::new())
    };
    // The result must load like any config of ours.
    Config::load(paths)?;
    Ok((copied, added))
}

/// A value of the store proper (keychain or secrets file); the environment and plaintext
/// config copies do not count as stored.
fn stored(store: &SecretStore, account: &str) -> Result<Option<Secret>, SetupError> {
    Ok(match store.lookup(account)? {
        Some((v, SecretSource::Keychain | SecretSource::File)) => Some(v),
        _ => None,
    })
}

/// Copies every key of `theirs` that `ours` lacks; sections merge key by key.
fn fill_missing(ours: &mut Mapping, theirs: &Mapping, prefix: &str, added: &mut Vec<String>) {
    for (k, v) in theirs {
        let name = k.as_str().map_or_else(|| format!("{k:?}"), str::to_owned);
        let key = join(prefix, &name);
        match (ours.get_mut(k), v) {
            (None, _) => {
                ours.insert(k.clone(), v.clone());
                added.push(key);
            }
            (Some(Value::Mapping(o)), Value::Mapping(t)) => fill_missing(o, t, &key, added),
            // Ours sets it: ours wins.
            _ => {}
        }
    }
}

/// Removes every value at a secret's key (fallback keys included), and sections left empty.
fn strip_secrets(value: &mut Value, prefix: &str) {
    match value {
        Value::Mapping(map) => {
            let keys: Vec<Value> = map.keys().cloned().collect();
            for k in keys {
                let Some(name) = k.as_str() else { continue };
                let key = join(prefix, name);
                let is_section =
                    matches!(map.get(&k), Some(Value::Mapping(_) | Value::Sequence(_)));
                if !is_section && config::secret_account(&key).is_some() {
                    map.remove(&k);
                    continue;
                }
                if let Some(child) = map.get_mut(&k) {
                    strip_secrets(child, &key);
                    if child.as_mapping().is_some_and(|m| m.is_empty()) {
                        map.remove(&k);
                    }
                }
            }
        }
        Value::Sequence(list) => {
            for (i, item) in list.iter_mut().enumerate() {
                strip_secrets(item, &join(prefix, &i.to_string()));
            }
        }
        _ => {}
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

fn parse(path: &Path, text: &str) -> Result<Value, SetupError> {
    match serde_yaml_ng::from_str(text) {
        Ok(Value::Null) => Ok(Value::Mapping(Mapping::new())),
        Ok(v @ Value::Mapping(_)) => Ok(v),
        Ok(_) => Err(config::ConfigError::Parse {
            path: path.to_owned(),
            message: "the top level must be a mapping of keys to values".into(),
        }
        .into()),
        Err(e) => Err(config::ConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        }
        .into()),
    }
}

/// Like `config set`: only what changed is rewritten, the file's comments stay.
fn write(path: &Path, doc: &Value) -> Result<(), SetupError> {
    Ok(crate::config::write_yaml(path, doc)?)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
