//! `$METACLAW_HOME/config.yaml`: a typed schema with the earlier versions' keys and aliases,
//! validated on load and on every edit. Secrets are not part of it (see [`crate::secrets`]).

mod agents;
mod de;
mod edit;
mod error;
mod keys;
mod learning;
mod llm;
mod load;
mod memory;
mod prices;
mod proxy;
mod rl;
mod scheduler;
mod skills;
mod skills_sync;
mod storage;
mod time;
mod updates;
mod write;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use agents::{ClawType, DataPolicy, OpenRouterConfig, OpenRouterRoute, WechatConfig};
pub use edit::{SetOutcome, UnsetOutcome, get, set, show, unset};
pub use error::ConfigError;
pub use keys::{SECRET_KEYS, secret_account};
pub use learning::{LearningConfig, MAX_HOLDOUT};
pub use llm::{AuthMethod, Fallback, LlmApi, LlmConfig};
pub use load::Loaded;
pub use memory::{MemoryConfig, MemoryRetrieval};
pub use prices::{Price, Prices};
pub use proxy::{InjectionConfig, Placement, ProxyConfig, SessionConfig};
pub use rl::{LossFn, ModelProvider, OpdConfig, RlBackend, RlConfig};
pub use scheduler::{CalendarConfig, SchedulerConfig};
pub use skills::{EmbeddingSource, SkillRetrieval, SkillsConfig};
pub use skills_sync::SkillsSync;
pub use storage::{MAX_KEEP_DAYS, StorageConfig};
pub use time::TimeOfDay;
pub use updates::{UpdateCheck, UpdatesConfig};
pub(crate) use write::write_doc as write_yaml;

use crate::paths::Paths;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    SkillsOnly,
    Rl,
    /// `auto` is the name v0.3 and v0.4 used.
    #[serde(alias = "auto")]
    Madmax,
}

impl Mode {
    pub const NAMES: &[&str] = &["skills_only", "rl", "madmax", "auto"];

    /// For `--mode`; accepts the same names as the file.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "skills_only" => Some(Self::SkillsOnly),
            "rl" => Some(Self::Rl),
            "madmax" | "auto" => Some(Self::Madmax),
            _ => None,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SkillsOnly => "skills_only",
            Self::Rl => "rl",
            Self::Madmax => "madmax",
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    pub mode: Mode,
    pub llm: LlmConfig,
    pub proxy: ProxyConfig,
    pub session: SessionConfig,
    pub injection: InjectionConfig,
    /// Advertised context window in tokens; 0 = derive from the model.
    pub context_window: u64,
    /// Prompt size above which old turns are dropped; 0 = derive from the window.
    pub max_context_tokens: u64,
    pub skills: SkillsConfig,
    pub memory: MemoryConfig,
    pub rl: RlConfig,
    pub opd: OpdConfig,
    pub scheduler: SchedulerConfig,
    pub learning: LearningConfig,
    pub storage: StorageConfig,
    pub updates: UpdatesConfig,
    pub claw_type: ClawType,
    /// Legacy switch: `false` meant `claw_type: none`. Folded in on load.
    #[serde(skip_serializing, deserialize_with = "legacy_bool")]
    configure_openclaw: Option<bool>,
    /// Legacy top-level spelling of `llm.bedrock_region`. Folded in on load.
    #[serde(skip_serializing)]
    bedrock_region: Option<String>,
    /// Whether the file chose the agent (`claw_type`, or the legacy `configure_openclaw`):
    /// only then does `start` connect it by itself.
    #[serde(skip)]
    claw_type_chosen: bool,
    pub openrouter: OpenRouterConfig,
    pub wechat: WechatConfig,
    /// Per-model prices that override or extend the built-in table.
    pub prices: Prices,
}

fn legacy_bool<'d, D: serde::Deserializer<'d>>(d: D) -> Result<Option<bool>, D::Error> {
    de::flexible_bool(d).map(Some)
}

/// Command-line overrides for one run; never written to the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    pub mode: Option<Mode>,
    pub port: Option<u16>,
}

impl Config {
    /// Reads `paths.config`; a missing file gives the defaults.
    pub fn load(paths: &Paths) -> Result<Loaded, ConfigError> {
        load::load(&paths.config)
    }

    pub fn apply(&mut self, overrides: Overrides) {
        if let Some(mode) = overrides.mode {
            self.mode = mode;
        }
        if let Some(port) = overrides.port {
            self.proxy.port = port;
        }
    }

    /// The agent `start` keeps connected: the one the file names, never the default alone,
    /// so a machine where nobody chose an agent is never edited behind the user's back.
    pub fn chosen_agent(&self) -> Option<ClawType> {
        (self.claw_type_chosen && self.claw_type != ClawType::None).then_some(self.claw_type)
    }

    /// `skills.dir` with `~` expanded, or `$METACLAW_HOME/skills` when unset.
    pub fn skills_dir(&self, paths: &Paths) -> PathBuf {
        resolve_dir(&self.skills.dir, &paths.skills)
    }
}

fn resolve_dir(configured: &str, default: &Path) -> PathBuf {
    if configured.is_empty() {
        return default.to_owned();
    }
    match configured.strip_prefix("~/") {
        Some(rest) => {
            std::env::home_dir().map_or_else(|| PathBuf::from(configured), |h| h.join(rest))
        }
        None => PathBuf::from(configured),
    }
}

#[cfg(test)]
mod tests;
