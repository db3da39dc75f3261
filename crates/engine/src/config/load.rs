//! Reading `config.yaml`: parse, warn about unknown keys, fold legacy aliases, validate, and
//! pick up plaintext secrets left by earlier versions.

use std::collections::BTreeMap;
use std::path::Path;

use serde_yaml_ng::Value;

use super::keys;
use super::{ClawType, Config, ConfigError};
use crate::secrets::Secret;

/// A loaded config and what the user should hear about it.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub config: Config,
    /// Unknown keys, plaintext secrets, ignored legacy keys; one line each.
    pub warnings: Vec<String>,
    /// Plaintext secrets found in the file, by account; the lowest-priority secret source.
    pub legacy_secrets: BTreeMap<String, Secret>,
}

pub(super) fn load(path: &Path) -> Result<Loaded, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Loaded::default()),
        Err(source) => Err(ConfigError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

pub(super) fn parse(path: &Path, text: &str) -> Result<Loaded, ConfigError> {
    let parse_error = |e: serde_yaml_ng::Error| ConfigError::Parse {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let doc: Value = serde_yaml_ng::from_str(text).map_err(parse_error)?;
    match doc {
        Value::Null => return Ok(Loaded::default()),
        Value::Mapping(_) => {}
        _ => {
            return Err(ConfigError::Parse {
                path: path.to_owned(),
                message: "the top level must be a mapping of keys to values".into(),
            });
        }
    }
    // Typed from the text, not from `doc`, so errors keep their line numbers.
    let mut ignored = Vec::new();
    let deserializer = serde_yaml_ng::Deserializer::from_str(text);
    let mut config: Config =
        serde_ignored::deserialize(deserializer, |p| ignored.push(p.to_string()))
            .map_err(parse_error)?;

    let mut warnings = Vec::new();
    for key in ignored.iter().filter(|k| !keys::is_secret_path(k)) {
        warnings.push(unknown_key_warning(path, key));
    }
    fold_legacy(&mut config, &doc, &mut warnings);
    validate(&config).map_err(|(key, message)| ConfigError::Invalid {
        path: path.to_owned(),
        key,
        message,
    })?;
    let legacy_secrets = keys::plaintext_secrets(&doc);
    for account in legacy_secrets.keys() {
        warnings.push(format!(
            "{} holds `{account}` in plain text; run `metaclaw config set {account} …` to move it into the keychain",
            path.display()
        ));
    }
    Ok(Loaded {
        config,
        warnings,
        legacy_secrets,
    })
}

fn unknown_key_warning(path: &Path, key: &str) -> String {
    let hint = keys::closest(key)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    format!("{}: unknown key `{key}` ignored{hint}", path.display())
}

/// Maps keys from earlier versions onto their current names.
fn fold_legacy(config: &mut Config, doc: &Value, warnings: &mut Vec<String>) {
    if let Some(old) = config.rl.tinker_base_url.take().filter(|u| !u.is_empty()) {
        if config.rl.base_url.is_empty() {
            config.rl.base_url = old;
        } else if config.rl.base_url != old {
            warnings.push("`rl.tinker_base_url` is ignored because `rl.base_url` is set".into());
        }
    }
    let legacy_switch = config.configure_openclaw.take();
    let explicit = keys::has_path(doc, "claw_type");
    if legacy_switch == Some(false) && !explicit {
        config.claw_type = ClawType::None;
    }
    config.claw_type_chosen = explicit || legacy_switch.is_some();
    if let Some(region) = config.bedrock_region.take()
        && !keys::has_path(doc, "llm.bedrock_region")
    {
        config.llm.bedrock_region = region;
    }
}

/// Smallest `storage.max_db_mb` other than 0: below this, retention would drop every body and
/// still be over.
const MIN_DB_MB: u64 = 10;

/// Checks that span several keys; single values are checked while parsing.
fn validate(config: &Config) -> Result<(), (String, String)> {
    let s = &config.scheduler;
    if s.sleep_start == s.sleep_end {
        return Err((
            "scheduler.sleep_end".into(),
            format!(
                "must differ from scheduler.sleep_start (both are {})",
                s.sleep_end
            ),
        ));
    }
    if s.calendar.poll_minutes == 0 {
        return Err((
            "scheduler.calendar.poll_minutes".into(),
            "must be at least 1 (minutes between calendar fetches)".into(),
        ));
    }
    let units = config.memory.max_injected_units;
    if !(1..=20).contains(&units) {
        return Err((
            "memory.max_injected_units".into(),
            format!("must be between 1 and 20 (memories shown per turn), not {units}"),
        ));
    }
    standing_budget(
        "memory.profile_tokens",
        config.memory.profile_tokens,
        "standing rules",
    )?;
    standing_budget(
        "skills.standing_tokens",
        config.skills.standing_tokens,
        "learned rules",
    )?;
    let holdout = config.learning.holdout;
    if !(0.0..=super::MAX_HOLDOUT).contains(&holdout) {
        return Err((
            "learning.holdout".into(),
            format!(
                "must be between 0 and {} (the share of sessions served without MetaClaw's block), not {holdout}",
                super::MAX_HOLDOUT
            ),
        ));
    }
    let days = config.storage.keep_turn_bodies_days;
    if days > super::MAX_KEEP_DAYS {
        return Err((
            "storage.keep_turn_bodies_days".into(),
            format!(
                "must be between 0 (forever) and {} days, not {days}",
                super::MAX_KEEP_DAYS
            ),
        ));
    }
    let mb = config.storage.max_db_mb;
    if (1..MIN_DB_MB).contains(&mb) {
        return Err((
            "storage.max_db_mb".into(),
            format!(
                "must be 0 (no limit) or at least {MIN_DB_MB} MB (skills, memories and figures alone can take a few MB), not {mb}"
            ),
        ));
    }
    if let Some(problem) = config.updates.manifest_problem() {
        return Err(("updates.manifest_url".into(), problem));
    }
    if let Some(problem) = config.skills.sync.remote_problem() {
        return Err(("skills.sync.remote".into(), problem));
    }
    if config.proxy.host.trim().is_empty() {
        return Err(("proxy.host".into(), "must not be empty".into()));
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, f) in config.llm.fallbacks.iter().enumerate() {
        if !names.insert(f.name.as_str()) {
            return Err((
                format!("llm.fallbacks.{i}.name"),
                format!("duplicate fallback name `{}`", f.name),
            ));
        }
    }
    Ok(())
}

/// A budget of tokens shown on every turn (memory's profile, the skills' standing rules):
/// 0 (off) up to `MAX_PROFILE_TOKENS`.
fn standing_budget(key: &str, tokens: u32, what: &str) -> Result<(), (String, String)> {
    let max = metaclaw_memory::policy::MAX_PROFILE_TOKENS;
    if usize::try_from(tokens).map_or(true, |t| t > max) {
        return Err((
            key.into(),
            format!(
                "must be between 0 and {max} (tokens of {what} shown on every turn), not {tokens}"
            ),
        ));
    }
    Ok(())
}
