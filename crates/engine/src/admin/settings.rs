//! `GET|PATCH /api/settings`: the settings screen's curated keys, read from the config file
//! and written through `config::set` (validated like a load, comments kept), all or nothing.
//!
//! Several keys are checked together: they are set one by one on a staged copy of the file
//! under `run/`, and only a copy where every change was accepted replaces the real file (in
//! one atomic write). So a refused value leaves the file byte-identical, and two keys that
//! only make sense together (sleep start and end) can change in one request.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::api_error::{ApiError, Invalid};
use super::routes::AdminState;
use crate::config::{self, Config, ConfigError, SetOutcome};
use crate::paths::{Paths, write_private_file};
use crate::secrets::SecretStore;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/settings", get(show).patch(patch))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Choice(&'static [&'static str]),
    Bool,
    Int,
    Time,
    /// `prices`: model name to its prices (see `config::Price`), the whole table at once.
    Prices,
    /// A share from 0 to the given maximum (`learning.holdout`).
    Share(f64),
}

struct Setting {
    key: &'static str,
    label: &'static str,
    help: &'static str,
    kind: Kind,
}

/// Every one is read at start, so each takes effect after a restart.
const SETTINGS: &[Setting] = &[
    Setting {
        key: "mode",
        label: "Mode",
        help: "skills_only: proxy, skills and memory. rl: also learns weights from your sessions (needs an RL backend). madmax: rl, training only in idle or sleep windows.",
        kind: Kind::Choice(&["skills_only", "rl", "madmax"]),
    },
    Setting {
        key: "proxy.port",
        label: "Port",
        help: "The local port agents send their requests to.",
        kind: Kind::Int,
    },
    Setting {
        key: "skills.enabled",
        label: "Skills",
        help: "Add relevant skills from your library to each request.",
        kind: Kind::Bool,
    },
    Setting {
        key: "skills.auto_evolve",
        label: "Learn new skills",
        help: "Write new skills from finished sessions.",
        kind: Kind::Bool,
    },
    Setting {
        key: "skills.review",
        label: "Review learned skills",
        help: "auto: a learned skill is used at once. ask: it waits in Skills as a proposal until you approve it.",
        kind: Kind::Choice(&["auto", "ask"]),
    },
    Setting {
        key: "memory.enabled",
        label: "Memory",
        help: "Remember facts and preferences across sessions and add them to requests.",
        kind: Kind::Bool,
    },
    Setting {
        key: "memory.auto_extract",
        label: "Extract memories",
        help: "Read new memories out of conversations automatically.",
        kind: Kind::Bool,
    },
    Setting {
        key: "memory.flush_every",
        label: "Extract every N turns",
        help: "Extract memories after this many turns of a session (0: only when it ends).",
        kind: Kind::Int,
    },
    Setting {
        key: "wechat.enabled",
        label: "WeChat (OpenClaw)",
        help: "Talk to your OpenClaw agent from WeChat: at start MetaClaw installs OpenClaw's official WeChat plugin with npx (Node.js needed), and the dashboard shows a QR code to scan. OpenClaw only. Turning it off leaves an installed plugin alone.",
        kind: Kind::Bool,
    },
    Setting {
        key: "injection.token_budget",
        label: "Context budget (tokens)",
        help: "The most tokens of skills and memory added to one request.",
        kind: Kind::Int,
    },
    Setting {
        key: "learning.holdout",
        label: "Holdout share",
        help: "The share of new conversations (0 to 0.5) served without MetaClaw's skills and memories, so the dashboard can show what they change on your own traffic. 0 turns it off; 0.1 holds out one conversation in ten.",
        kind: Kind::Share(config::MAX_HOLDOUT),
    },
    Setting {
        key: "prices",
        label: "Prices",
        help: "What your provider charges, in US dollars per million tokens, for the costs on the dashboard and in status. A cache price left empty is billed at the input price. Models not listed use MetaClaw's built-in list price where it has one, else they are shown as tokens only.",
        kind: Kind::Prices,
    },
    Setting {
        key: "storage.keep_turn_bodies_days",
        label: "Keep conversations (days)",
        help: "Days the messages of each recorded turn are kept; older ones are dropped once learning has read them. Usage, cost and effect figures, skills and memories are kept for ever. 0 keeps messages forever.",
        kind: Kind::Int,
    },
    Setting {
        key: "storage.max_db_mb",
        label: "Largest database (MB)",
        help: "Above this size the oldest conversations' messages are dropped until it fits (at least 10). 0: no limit.",
        kind: Kind::Int,
    },
    Setting {
        key: "scheduler.sleep_start",
        label: "Sleep hours start",
        help: "When your night begins (HH:MM): training may run until the end.",
        kind: Kind::Time,
    },
    Setting {
        key: "scheduler.sleep_end",
        label: "Sleep hours end",
        help: "When your night ends (HH:MM).",
        kind: Kind::Time,
    },
    Setting {
        key: "scheduler.idle_threshold_minutes",
        label: "Idle after (minutes)",
        help: "Minutes without keyboard or mouse before a training window opens.",
        kind: Kind::Int,
    },
    Setting {
        key: "scheduler.min_window_minutes",
        label: "Shortest window (minutes)",
        help: "A training step starts only when at least this long is expected.",
        kind: Kind::Int,
    },
    Setting {
        key: "scheduler.gate_background_learning",
        label: "Learn only in windows",
        help: "Hold skill evolution and memory consolidation until a training window opens.",
        kind: Kind::Bool,
    },
    Setting {
        key: "scheduler.calendar.enabled",
        label: "Calendar windows",
        help: "Meetings you accepted in Google Calendar open training windows (connect the calendar first).",
        kind: Kind::Bool,
    },
];

async fn show(State(state): State<Arc<AdminState>>) -> Result<Json<Value>, ApiError> {
    let home = state.home.clone();
    let (path, loaded) = tokio::task::spawn_blocking(move || {
        let paths = Paths::new(&home)?;
        let loaded = Config::load(&paths)?;
        Ok::<_, ApiError>((paths.config, loaded))
    })
    .await??;
    let effective = serde_json::to_value(&loaded.config).unwrap_or(Value::Null);
    let settings: Vec<Value> = SETTINGS
        .iter()
        .map(|s| {
            let value = s
                .key
                .split('.')
                .try_fold(&effective, |v, part| v.get(part))
                .cloned()
                .unwrap_or(Value::Null);
            let mut item = json!({
                "key": s.key,
                "label": s.label,
                "help": s.help,
                "type": match s.kind {
                    Kind::Choice(_) => "choice",
                    Kind::Bool => "bool",
                    Kind::Int => "int",
                    Kind::Time => "time",
                    Kind::Prices => "prices",
                    Kind::Share(_) => "share",
                },
                "value": value,
                "restart": true,
            });
            if let (Kind::Choice(choices), Some(obj)) = (s.kind, item.as_object_mut()) {
                obj.insert("choices".into(), json!(choices));
            }
            if let (Kind::Share(max), Some(obj)) = (s.kind, item.as_object_mut()) {
                obj.insert("max".into(), json!(max));
            }
            item
        })
        .collect();
    Ok(Json(json!({
        "config_path": path.display().to_string(),
        "settings": settings,
        "warnings": loaded.warnings,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchBody {
    changes: Map<String, Value>,
}

async fn patch(State(state): State<Arc<AdminState>>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let body: PatchBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "the body must be {{\"changes\": {{\"<key>\": <value>, ...}}}}: {e}"
        ))
    })?;
    let mut changes = Vec::with_capacity(body.changes.len());
    for (key, value) in &body.changes {
        let refused = |message| {
            ApiError::Invalid(Invalid {
                field: key.clone(),
                message,
            })
        };
        let setting = SETTINGS
            .iter()
            .find(|s| s.key == key)
            .ok_or_else(|| refused(format!("{key} is not a setting this screen changes.")))?;
        let text = text_of(setting, value).map_err(refused)?;
        changes.push((setting.key.to_owned(), text));
    }
    let home = state.home.clone();
    let written = tokio::task::spawn_blocking(move || {
        let paths = Paths::new(&home)?;
        let store = SecretStore::open(&paths)?;
        let staged = Staged::new(&paths).map_err(ApiError::internal)?;
        let written = staged.set_all(&store, &changes)?;
        staged.commit(&paths)?;
        Ok::<_, ApiError>(written)
    })
    .await??;
    Ok(Json(json!({
        "restart_required": !written.is_empty(),
        "written": written,
    })))
}

/// A JSON value as the text `config::set` reads, checked against the setting's type.
fn text_of(setting: &Setting, value: &Value) -> Result<String, String> {
    let key = setting.key;
    match (setting.kind, value) {
        (Kind::Bool, Value::Bool(b)) => Ok(b.to_string()),
        (Kind::Bool, _) => Err(format!("{key} must be true or false.")),
        (Kind::Int, Value::Number(n)) if n.is_u64() => Ok(n.to_string()),
        (Kind::Int, Value::String(s)) if s.trim().parse::<u64>().is_ok() => Ok(s.trim().into()),
        (Kind::Int, _) => Err(format!("{key} must be a whole number of 0 or more.")),
        (Kind::Choice(choices), Value::String(s)) if choices.contains(&s.trim()) => {
            Ok(s.trim().into())
        }
        (Kind::Choice(choices), _) => Err(format!("{key} must be one of: {}.", choices.join(", "))),
        (Kind::Time, Value::String(s)) if config::TimeOfDay::parse(s).is_some() => {
            Ok(s.trim().into())
        }
        (Kind::Time, _) => Err(format!("{key} must be a time HH:MM (00:00 to 23:59).")),
        // JSON is YAML: the config's own parser checks every model and price.
        (Kind::Prices, Value::Object(_)) => Ok(value.to_string()),
        (Kind::Share(max), v) => match share_of(v) {
            Some(n) if (0.0..=max).contains(&n) => Ok(n.to_string()),
            _ => Err(format!("{key} must be a number from 0 to {max}.")),
        },
        (Kind::Prices, _) => Err(format!(
            "{key} must be a table of models, each with its input and output prices."
        )),
    }
}

/// A number, or a number written as text (a form field).
fn share_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A config error as a sentence, without the file's path (a staged copy's, here).
pub(super) fn sentence(field: &str, e: &ConfigError) -> Invalid {
    let message = match e {
        ConfigError::Invalid { key, message, .. } if key.is_empty() => message.clone(),
        ConfigError::Invalid { key, message, .. } => format!("{key}: {message}"),
        ConfigError::Parse { message, .. } => message.clone(),
        other => other.to_string(),
    };
    Invalid {
        field: field.to_owned(),
        message,
    }
}

static STAGED: AtomicU64 = AtomicU64::new(0);

/// A private copy of the config file under `run/`, removed when dropped.
pub(super) struct Staged {
    dir: PathBuf,
    pub paths: Paths,
    before: Option<Vec<u8>>,
}

impl Staged {
    /// Blocking.
    pub fn new(real: &Paths) -> std::io::Result<Staged> {
        let n = STAGED.fetch_add(1, Ordering::Relaxed);
        let dir = real
            .run
            .join(format!("config-staged.{}.{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let paths = Paths::new(&dir).map_err(std::io::Error::other)?;
        let before = match std::fs::read(&real.config) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if let Some(bytes) = &before {
            write_private_file(&paths.config, bytes)?;
        }
        Ok(Staged { dir, paths, before })
    }

    /// Sets every `(key, text)` on the copy, returning the keys written. A change refused
    /// only because of another not yet made (sleep start equal to the old end) is tried
    /// again after the others; the first refusal that stays is the answer.
    pub fn set_all(
        &self,
        store: &SecretStore,
        changes: &[(String, String)],
    ) -> Result<Vec<String>, ApiError> {
        let mut pending: Vec<&(String, String)> = changes.iter().collect();
        let mut written = Vec::new();
        while !pending.is_empty() {
            let before = pending.len();
            let mut refused = Vec::new();
            let mut first: Option<Invalid> = None;
            for change in pending {
                match config::set(&self.paths, &change.0, &change.1, store) {
                    Ok(SetOutcome::Written { key, .. }) => written.push(key),
                    Ok(SetOutcome::Secret { account, .. }) => written.push(account),
                    Err(ConfigError::Read { .. } | ConfigError::Write { .. }) => {
                        return Err(ApiError::Internal(format!(
                            "cannot write the staged copy of the config for {}",
                            change.0
                        )));
                    }
                    Err(e) => {
                        first.get_or_insert_with(|| sentence(&change.0, &e));
                        refused.push(change);
                    }
                }
            }
            if let Some(i) = first
                && refused.len() == before
            {
                return Err(ApiError::Invalid(i));
            }
            pending = refused;
        }
        Ok(written)
    }

    /// The staged file replaces the real one, in one atomic write; false when nothing
    /// changed (and nothing was written).
    pub fn commit(&self, real: &Paths) -> Result<bool, ApiError> {
        let after = match std::fs::read(&self.paths.config) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => {
                return Err(ApiError::Internal(format!(
                    "cannot read the staged config: {e}"
                )));
            }
        };
        if self.before.as_deref() == Some(after.as_slice()) {
            return Ok(false);
        }
        write_private_file(&real.config, &after).map_err(|e| {
            ApiError::Internal(format!("cannot write {}: {e}", real.config.display()))
        })?;
        Ok(true)
    }

    /// Puts the real file back as it was before [`Staged::commit`].
    pub fn restore(&self, real: &Paths) {
        let result = match &self.before {
            Some(b) => write_private_file(&real.config, b),
            None => match std::fs::remove_file(&real.config) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        };
        if let Err(e) = result {
            tracing::error!(path = %real.config.display(), "cannot restore the config: {e}");
        }
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;
    use crate::secrets::BackendChoice;

    fn setting(key: &str) -> &'static Setting {
        SETTINGS.iter().find(|s| s.key == key).unwrap()
    }

    #[test]
    fn values_are_checked_against_the_setting_type() {
        let port = setting("proxy.port");
        assert_eq!(text_of(port, &json!(31000)).unwrap(), "31000");
        assert_eq!(text_of(port, &json!(" 31000 ")).unwrap(), "31000");
        assert!(
            text_of(port, &json!(-1))
                .unwrap_err()
                .contains("proxy.port")
        );
        assert!(text_of(port, &json!("abc")).is_err());
        let on = setting("skills.enabled");
        assert_eq!(text_of(on, &json!(false)).unwrap(), "false");
        assert!(text_of(on, &json!("yes")).is_err());
        let mode = setting("mode");
        assert_eq!(text_of(mode, &json!("rl")).unwrap(), "rl");
        assert!(
            text_of(mode, &json!("turbo"))
                .unwrap_err()
                .contains("skills_only")
        );
        let start = setting("scheduler.sleep_start");
        assert_eq!(text_of(start, &json!("7:30")).unwrap(), "7:30");
        assert!(text_of(start, &json!("24:00")).is_err());
        let prices = setting("prices");
        assert_eq!(
            text_of(prices, &json!({"m": {"input": 1, "output": 2}})).unwrap(),
            r#"{"m":{"input":1,"output":2}}"#
        );
        assert!(
            text_of(prices, &json!("cheap"))
                .unwrap_err()
                .contains("table of models")
        );
    }

    #[test]
    fn the_holdout_share_is_a_number_up_to_a_half_and_the_config_checks_it_too() {
        let holdout = setting("learning.holdout");
        assert_eq!(text_of(holdout, &json!(0.1)).unwrap(), "0.1");
        assert_eq!(text_of(holdout, &json!(" 0.25 ")).unwrap(), "0.25");
        for bad in [json!(0.6), json!(-0.1), json!("half"), json!(true)] {
            assert!(
                text_of(holdout, &bad)
                    .unwrap_err()
                    .contains("from 0 to 0.5"),
                "{bad}"
            );
        }
        let (_dir, paths, store) = home();
        let staged = Staged::new(&paths).unwrap();
        staged
            .set_all(&store, &changes(&[("learning.holdout", "0.2")]))
            .map_err(|_| "refused")
            .unwrap();
        assert!(staged.commit(&paths).unwrap());
        assert_eq!(Config::load(&paths).unwrap().config.learning.holdout, 0.2);
        // Past the form, the config itself refuses a share above a half.
        let staged = Staged::new(&paths).unwrap();
        let Err(ApiError::Invalid(i)) =
            staged.set_all(&store, &changes(&[("learning.holdout", "0.9")]))
        else {
            panic!("a holdout of 0.9 must be refused");
        };
        assert_eq!(i.field, "learning.holdout");
    }

    #[test]
    fn a_price_table_is_written_whole_and_checked_by_the_config() {
        let (_dir, paths, store) = home();
        let table = json!({"qwen-plus": {"input": 0.4, "output": 1.2, "cache_read": 0.08}});
        let staged = Staged::new(&paths).unwrap();
        let text = text_of(setting("prices"), &table).unwrap();
        let written = staged
            .set_all(&store, &changes(&[("prices", &text)]))
            .map_err(|_| "refused")
            .unwrap();
        assert_eq!(written, ["prices"]);
        assert!(staged.commit(&paths).unwrap());
        let config = Config::load(&paths).unwrap().config;
        let price = config.prices["qwen-plus"];
        assert_eq!((price.input, price.output), (0.4, 1.2));
        assert_eq!((price.cache_read, price.cache_write), (Some(0.08), None));

        // A negative price is refused with its key; the file stays as it was.
        let before = std::fs::read(&paths.config).unwrap();
        let bad = text_of(
            setting("prices"),
            &json!({"qwen-plus": {"input": -1, "output": 1}}),
        )
        .unwrap();
        let staged = Staged::new(&paths).unwrap();
        let Err(ApiError::Invalid(i)) = staged.set_all(&store, &changes(&[("prices", &bad)]))
        else {
            panic!("a negative price must be refused");
        };
        assert_eq!(i.field, "prices");
        assert!(i.message.contains("per million tokens"), "{}", i.message);
        drop(staged);
        assert_eq!(std::fs::read(&paths.config).unwrap(), before);

        // An empty table clears them.
        let staged = Staged::new(&paths).unwrap();
        staged
            .set_all(&store, &changes(&[("prices", "{}")]))
            .map_err(|_| "refused")
            .unwrap();
        assert!(staged.commit(&paths).unwrap());
        assert!(Config::load(&paths).unwrap().config.prices.is_empty());
    }

    fn home() -> (tempfile::TempDir, Paths, SecretStore) {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::new(dir.path()).unwrap();
        paths.ensure_dirs().unwrap();
        let store = SecretStore::new(&paths, BackendChoice::File);
        (dir, paths, store)
    }

    fn changes(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_refused_change_leaves_the_file_and_the_staging_gone() {
        let (_dir, paths, store) = home();
        let before = "# mine\nmemory:\n  flush_every: 3 # often\n";
        std::fs::write(&paths.config, before).unwrap();
        {
            let staged = Staged::new(&paths).unwrap();
            let refused = staged.set_all(
                &store,
                &changes(&[
                    ("memory.flush_every", "9"),
                    ("scheduler.sleep_start", "07:00"),
                ]),
            );
            let Err(ApiError::Invalid(i)) = refused else {
                panic!("sleep start equal to the default end must be refused");
            };
            assert_eq!(i.field, "scheduler.sleep_start");
            assert!(i.message.contains("must differ"), "{}", i.message);
        }
        assert_eq!(std::fs::read_to_string(&paths.config).unwrap(), before);
        let left: Vec<_> = std::fs::read_dir(&paths.run).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn changes_that_only_fit_together_are_written_in_one_go() {
        let (_dir, paths, store) = home();
        std::fs::write(&paths.config, "# mine\nmode: skills_only # chosen\n").unwrap();
        let staged = Staged::new(&paths).unwrap();
        let written = staged
            .set_all(
                &store,
                &changes(&[
                    ("scheduler.sleep_start", "07:00"),
                    ("scheduler.sleep_end", "15:00"),
                ]),
            )
            .map_err(|_| "refused")
            .unwrap();
        assert_eq!(written, ["scheduler.sleep_end", "scheduler.sleep_start"]);
        assert!(staged.commit(&paths).unwrap());
        let text = std::fs::read_to_string(&paths.config).unwrap();
        assert!(
            text.starts_with("# mine\nmode: skills_only # chosen\n"),
            "{text}"
        );
        let config = Config::load(&paths).unwrap().config;
        assert_eq!(config.scheduler.sleep_start.to_string(), "07:00");
        assert_eq!(config.scheduler.sleep_end.to_string(), "15:00");
        // Nothing new: nothing written.
        let again = Staged::new(&paths).unwrap();
        assert!(!again.commit(&paths).unwrap());
    }
}
