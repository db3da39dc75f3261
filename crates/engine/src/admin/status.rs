//! What `metaclaw status` and the dashboard show.

use serde::{Deserialize, Serialize};

use crate::llm::calls::LearningCalls;
use crate::llm::pacing::JobHealth;
use crate::recorder::RecorderHealth;
use crate::supervise::TaskReport;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UpstreamStatus {
    pub name: String,
    pub protocol: String,
    pub base_url: String,
    pub model: Option<String>,
    /// Where its key came from (`env`, `keychain`, `file`, `config`), or `none`.
    pub key_source: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Status {
    pub version: String,
    pub pid: u32,
    pub mode: String,
    pub listen: String,
    pub uptime_secs: u64,
    pub upstreams: Vec<UpstreamStatus>,
    pub requests: u64,
    pub errors: u64,
    pub last_error: Option<String>,
    pub last_error_at_ms: Option<u64>,
    pub sessions_open: usize,
    pub turns_recorded: u64,
    pub recorder_queue: usize,
    pub recorder_dropped: u64,
    pub home: String,
    pub log_dir: String,
    /// `None` when skills are off.
    #[serde(default)]
    pub skills: Option<SkillsStatus>,
    /// `None` when memory is off.
    #[serde(default)]
    pub memory: Option<MemoryStatus>,
    /// What went wrong out of sight: lost recordings, failing learning, the database.
    #[serde(default)]
    pub health: Health,
    /// Calls made to the provider for learning, and the tokens they cost.
    #[serde(default)]
    pub learning_calls: LearningCalls,
    /// The background tasks running, restarting after a panic, or failed.
    #[serde(default)]
    pub tasks: Vec<TaskReport>,
    /// The WeChat channel, when it is not simply off.
    #[serde(default)]
    pub wechat: Option<WechatStatus>,
    /// Retrieval by meaning: its source and whether it works now; `None` when skills and
    /// memory are both retrieved by words only.
    #[serde(default)]
    pub embeddings: Option<crate::embeddings::EmbeddingsStatus>,
    /// The database's size and the retention in force (`/api/storage` has the breakdown).
    #[serde(default)]
    pub storage: Option<crate::storage::StorageStatus>,
    /// The models learning calls, and what learns without one.
    #[serde(default)]
    pub learning_model: Option<LearningModel>,
    /// A newer version to install, or one installed already that a restart would run.
    #[serde(default)]
    pub update: Option<crate::updates::UpdateStatus>,
}

/// Which model each learning job calls; without one, skills are not learned and memories
/// are read by rules only (a user with a subscription and no provider key).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearningModel {
    /// Skill evolution's model; `None` when it is on but has none.
    pub evolution: Option<String>,
    /// Memory extraction's model; `None`: the rule-based extractor.
    pub extraction: Option<String>,
    /// The sentence status and the dashboard show.
    pub line: String,
}

impl LearningModel {
    /// What learning uses, given which jobs are on and the models they resolved.
    pub fn new(
        evolution_on: bool,
        extraction_on: bool,
        models: &std::collections::BTreeMap<String, String>,
    ) -> Option<LearningModel> {
        if !evolution_on && !extraction_on {
            return None;
        }
        let evolution = models.get("evolution").filter(|_| evolution_on).cloned();
        let extraction = models.get("extraction").filter(|_| extraction_on).cloned();
        let mut parts = Vec::new();
        if evolution_on {
            parts.push(match &evolution {
                Some(m) => format!("skills learned with {m}"),
                None => "skills are not learned (no model)".to_owned(),
            });
        }
        if extraction_on {
            parts.push(match &extraction {
                Some(m) => format!("memories read with {m}"),
                None => "memories read by rules only (no model)".to_owned(),
            });
        }
        let mut line = parts.join("; ");
        if (evolution_on && evolution.is_none()) || (extraction_on && extraction.is_none()) {
            line.push_str(
                ". A model for learning alone: any OpenAI- or Anthropic-compatible endpoint, a local Ollama included (skills.evolver_api_base, memory.extractor_api_base; docs/configuration.md)",
            );
        }
        Some(LearningModel {
            evolution,
            extraction,
            line,
        })
    }
}

#[cfg(test)]
mod learning_model_tests {
    use super::*;

    #[test]
    fn without_a_model_status_says_what_still_learns() {
        let none = std::collections::BTreeMap::new();
        let m = LearningModel::new(true, true, &none).unwrap_or_default();
        assert!(m.line.starts_with(
            "skills are not learned (no model); memories read by rules only (no model). A model for learning alone"
        ), "{}", m.line);
        let mut models = std::collections::BTreeMap::new();
        models.insert("evolution".to_owned(), "gpt-4o-mini".to_owned());
        models.insert("extraction".to_owned(), "gpt-4o-mini".to_owned());
        let m = LearningModel::new(true, false, &models).unwrap_or_default();
        assert_eq!(m.line, "skills learned with gpt-4o-mini");
        assert_eq!(m.extraction, None);
        assert!(LearningModel::new(false, false, &models).is_none());
    }
}

/// The WeChat channel in status: its state and the sentence for it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WechatStatus {
    pub state: String,
    pub line: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Health {
    /// The database could not be read (or the recorder can no longer write it).
    pub database: Option<String>,
    pub recorder: RecorderHealth,
    /// Learning jobs that have failed since start: `skill_evolution`, `memory_extraction`,
    /// `rl_trainer`. A job that never failed is not listed.
    pub learning: Vec<JobHealth>,
}

impl Health {
    /// The newest problem of all (`tasks` adds background tasks' panics), with its time,
    /// if any has a time.
    pub fn newest(&self, tasks: &[TaskReport]) -> Option<(String, i64)> {
        let r = &self.recorder;
        let mut all: Vec<(String, i64)> = Vec::new();
        if let (Some(e), Some(at)) = (&r.last_write_error, r.last_write_error_at_ms) {
            all.push((format!("recorder: {e}"), at));
        }
        if let Some(at) = r.last_dropped_at_ms {
            all.push(("recorder: queue full, turns dropped".into(), at));
        }
        for j in &self.learning {
            if let (Some(e), Some(at)) = (&j.last_error, j.last_error_at_ms) {
                all.push((format!("{}: {e}", j.job.replace('_', " ")), at));
            }
        }
        for t in tasks {
            if let (Some(e), Some(at)) = (&t.last_panic, t.last_panic_ms) {
                all.push((format!("{} panicked: {e}", t.name), at));
            }
        }
        all.into_iter().max_by_key(|(_, at)| *at)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryStatus {
    pub active: u64,
    pub pinned: u64,
    pub superseded: u64,
    pub archived: u64,
    pub scopes: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkillsStatus {
    pub count: usize,
    pub disabled: usize,
    /// Files skipped because they do not parse (see `metaclaw skills list`).
    pub broken_files: usize,
    pub generation: u64,
    pub evolutions: u64,
    pub evolutions_failed: u64,
    pub skills_added: u64,
    pub skills_improved: u64,
    pub last_evolution_at_ms: Option<i64>,
    /// Skills by where they came from: `builtin`, `user`, `evolved`, `imported`, `team`.
    #[serde(default)]
    pub by_source: std::collections::BTreeMap<String, usize>,
    /// Held back by the safety gate (`metaclaw skills quarantine`).
    #[serde(default)]
    pub quarantined: usize,
    /// The team library, when `skills.sync.remote` is set.
    #[serde(default)]
    pub team: Option<TeamStatus>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TeamStatus {
    pub remote: String,
    pub last_sync_ms: Option<u64>,
    /// Why the last sync could not reach the team or send its changes.
    pub last_error: Option<String>,
}
