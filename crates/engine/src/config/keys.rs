//! The key schema: which dotted keys exist, their types, aliases, and which are secrets.

use std::collections::BTreeMap;

use serde_yaml_ng::{Mapping, Value};

use super::Config;
use crate::secrets::Secret;

/// Secret accounts with a fixed name. Fallback keys are `llm.fallbacks.<name>.api_key`.
pub const SECRET_KEYS: &[&str] = &[
    "llm.api_key",
    "proxy.api_key",
    "rl.api_key",
    "rl.prm_api_key",
    "rl.evolver_api_key",
    "skills.evolver_api_key",
    "skills.embedding_api_key",
    "memory.extractor_api_key",
    "opd.teacher_api_key",
];

/// Earlier names still accepted, and their current key.
const ALIASES: &[(&str, &str)] = &[
    ("rl.tinker_api_key", "rl.api_key"),
    ("rl.tinker_base_url", "rl.base_url"),
];

/// The current name of `key`.
pub(super) fn canonical(key: &str) -> &str {
    ALIASES
        .iter()
        .find(|(old, _)| *old == key)
        .map_or(key, |(_, new)| new)
}

/// Legacy spellings of `key` that an edit must remove so they cannot shadow it.
pub(super) fn aliases_of(key: &str) -> impl Iterator<Item = &'static str> {
    ALIASES
        .iter()
        .filter(move |(_, new)| *new == key)
        .map(|(old, _)| *old)
}

/// The secret-store account for a config key, if it names a secret (aliases accepted).
pub fn secret_account(key: &str) -> Option<String> {
    let key = canonical(key);
    if SECRET_KEYS.contains(&key) {
        return Some(key.to_owned());
    }
    let name = key
        .strip_prefix("llm.fallbacks.")?
        .strip_suffix(".api_key")?;
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    valid.then(|| key.to_owned())
}

/// Whether a key the typed schema ignored is a secret (handled separately, not "unknown").
/// Fallback entries appear by index: `llm.fallbacks.0.api_key`.
pub(super) fn is_secret_path(path: &str) -> bool {
    secret_account(path).is_some()
}

/// What `config set` must turn a string into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    Bool,
    Int,
    Float,
    Str,
    List,
    Map,
}

pub(super) enum Lookup {
    Leaf(Kind),
    Section(Vec<String>),
}

/// The schema is the serialised default config: every key with its default value.
pub(super) fn schema() -> Value {
    serde_yaml_ng::to_value(Config::default()).unwrap_or(Value::Null)
}

pub(super) fn lookup(key: &str) -> Option<Lookup> {
    let schema = schema();
    let node = walk(&schema, key)?;
    Some(match node {
        Value::Bool(_) => Lookup::Leaf(Kind::Bool),
        Value::Number(n) if n.is_f64() => Lookup::Leaf(Kind::Float),
        Value::Number(_) => Lookup::Leaf(Kind::Int),
        Value::String(_) => Lookup::Leaf(Kind::Str),
        Value::Sequence(_) => Lookup::Leaf(Kind::List),
        // A mapping with no keys by default (`llm.extra_headers`) is a free-form value.
        Value::Mapping(m) if m.is_empty() => Lookup::Leaf(Kind::Map),
        Value::Mapping(m) => Lookup::Section(
            m.keys()
                .filter_map(Value::as_str)
                .map(|k| format!("{key}.{k}"))
                .collect(),
        ),
        Value::Null | Value::Tagged(_) => return None,
    })
}

pub(super) fn walk<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    key.split('.').try_fold(value, |node, part| match node {
        Value::Mapping(m) => m.get(part),
        Value::Sequence(s) => s.get(part.parse::<usize>().ok()?),
        _ => None,
    })
}

pub(super) fn has_path(doc: &Value, key: &str) -> bool {
    walk(doc, key).is_some()
}

/// Every settable key, for suggestions.
fn all_keys() -> Vec<String> {
    fn collect(prefix: &str, m: &Mapping, out: &mut Vec<String>) {
        for (k, v) in m {
            let Some(k) = k.as_str() else { continue };
            let key = if prefix.is_empty() {
                k.to_owned()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                Value::Mapping(child) if !child.is_empty() => collect(&key, child, out),
                _ => out.push(key),
            }
        }
    }
    let mut out: Vec<String> = SECRET_KEYS.iter().map(|s| (*s).to_owned()).collect();
    if let Value::Mapping(m) = schema() {
        collect("", &m, &mut out);
    }
    out
}

/// The known key nearest to `key` by edit distance (on the whole key, or on its last part
/// when the user left out the section).
pub(super) fn closest(key: &str) -> Option<String> {
    all_keys()
        .into_iter()
        .map(|k| {
            let last = k.rsplit('.').next().unwrap_or(&k);
            let d = distance(key, &k).min(distance(key, last) + 1);
            (d, k)
        })
        .min_by_key(|(d, _)| *d)
        .filter(|(d, _)| *d <= key.len().max(4) / 2 + 1)
        .map(|(_, k)| k)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Non-empty secret values written in the file by earlier versions, by account. A value of
/// the form `keychain:<account>` is a reference, not a secret.
pub(super) fn plaintext_secrets(doc: &Value) -> BTreeMap<String, Secret> {
    let mut found = BTreeMap::new();
    let mut take = |account: String, value: Option<&Value>| {
        if let Some(v) = value.and_then(scalar_text)
            && !v.is_empty()
            && !v.starts_with("keychain:")
        {
            found.entry(account).or_insert_with(|| Secret::new(v));
        }
    };
    for key in SECRET_KEYS {
        take((*key).to_owned(), walk(doc, key));
    }
    for (old, new) in ALIASES {
        if SECRET_KEYS.contains(new) {
            take((*new).to_owned(), walk(doc, old));
        }
    }
    if let Some(Value::Sequence(list)) = walk(doc, "llm.fallbacks") {
        for item in list {
            if let Some(name) = item.get("name").and_then(Value::as_str) {
                take(format!("llm.fallbacks.{name}.api_key"), item.get("api_key"));
            }
        }
    }
    found
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(closest("llm.modelid").as_deref(), Some("llm.model_id"));
        assert_eq!(closest("proxy.prot").as_deref(), Some("proxy.port"));
        assert_eq!(closest("port").as_deref(), Some("proxy.port"));
        assert_eq!(closest("zzzzzzzzzzzzzzzzzzzzzz"), None);
    }

    #[test]
    fn secret_accounts() {
        assert_eq!(
            secret_account("rl.tinker_api_key").as_deref(),
            Some("rl.api_key")
        );
        assert_eq!(
            secret_account("llm.fallbacks.backup.api_key").as_deref(),
            Some("llm.fallbacks.backup.api_key")
        );
        assert!(is_secret_path("llm.fallbacks.0.api_key"));
        assert_eq!(secret_account("llm.model_id"), None);
    }
}
