//! Start phase 1: the config (with the command line's overrides), the instance lock, the
//! built-in skills, and what the keychain holds: the proxy's upstreams and key, the models
//! the learning jobs call, the weight-learning settings.

use std::collections::BTreeMap;

use crate::admin::UpstreamStatus;
use crate::config::{Config, EmbeddingSource, Overrides, SkillRetrieval};
use crate::llm::{self, Endpoint};
use crate::memory::policies;
use crate::paths::Paths;
use crate::rl::RlSettings;
use crate::runfiles::InstanceLock;
use crate::secrets::{SecretStore, ensure_proxy_key};
use crate::wiring::{self, LLM_KEY};

use super::EngineError;

/// What the later phases read.
pub(super) struct Resolved {
    pub config: Config,
    /// The config file's warnings (logged, and shown by status).
    pub warnings: Vec<String>,
    pub secrets: SecretStore,
    pub proxy: metaclaw_proxy::ProxyConfig,
    pub upstreams: Vec<UpstreamStatus>,
    pub rl: Option<RlSettings>,
    /// The model each learning purpose calls, to price its recorded tokens.
    pub learning_models: BTreeMap<String, String>,
}

pub(super) async fn resolve(
    paths: &Paths,
    overrides: Overrides,
) -> Result<(Resolved, JobModels, InstanceLock), EngineError> {
    let loaded = Config::load(paths)?;
    for w in &loaded.warnings {
        tracing::warn!("{w}");
    }
    let mut config = loaded.config.clone();
    config.apply(overrides);
    let lock = InstanceLock::acquire(paths)?;
    install_skills(config.skills_dir(paths)).await;

    // Keychain access blocks (D-Bus); keep it off the runtime's worker threads.
    let secrets = SecretStore::open(paths)?.with_legacy(loaded.legacy_secrets.clone());
    let (proxy, upstreams, models, rl) = {
        let secrets = secrets.clone();
        let config = config.clone();
        let paths = paths.clone();
        tokio::task::spawn_blocking(move || -> Result<_, EngineError> {
            let key = ensure_proxy_key(&secrets)?;
            let proxy = wiring::proxy_config(&config, &secrets, Some(key))?;
            let upstreams = upstream_status(&proxy, &config, &secrets);
            let rl = crate::rl::wants_rl(config.mode)
                .then(|| crate::rl::resolve(&config, &paths, &secrets))
                .transpose()?;
            let models = JobModels {
                evolver: llm::evolver_endpoint(&config, &secrets),
                embeddings: (wants_embeddings(&config)
                    && config.skills.embedding_source() == EmbeddingSource::Api)
                    .then(|| llm::embedding_endpoint(&config, &secrets))
                    .flatten(),
                extractor: llm::extractor_endpoint(&config, &secrets),
            };
            Ok((proxy, upstreams, models, rl))
        })
        .await
        .map_err(|e| EngineError::Task(e.to_string()))??
    };
    let mut learning_models = models.by_purpose();
    if let Some(rl) = &rl {
        let judged = rl.judge.as_ref().map(|j| ("judge", &j.model));
        let taught = rl.teacher.as_ref().map(|t| ("distillation", &t.model));
        for (purpose, model) in judged.into_iter().chain(taught) {
            learning_models.insert(purpose.to_owned(), model.clone());
        }
    }
    if proxy.upstreams.is_empty() {
        tracing::warn!(
            "no LLM provider configured: requests will get a 503 until `metaclaw config set llm.api_base <url>` (and llm.api_key) and a restart"
        );
    }
    let resolved = Resolved {
        config,
        warnings: loaded.warnings,
        secrets,
        proxy,
        upstreams,
        rl,
        learning_models,
    };
    Ok((resolved, models, lock))
}

/// Fills the user's library with the built-in bank on first run and brings untouched
/// built-ins up to date; skills the user edited or deleted are left alone. Then rewrites
/// files of the earlier frontmatter format in the current one (originals kept in
/// `skills/.backup/`). A failure here costs the user skills, not the proxy, so it is logged
/// and start-up goes on.
async fn install_skills(dir: std::path::PathBuf) {
    let shown = dir.display().to_string();
    let done = tokio::task::spawn_blocking(move || {
        let installed = metaclaw_skills::install_builtins(&dir);
        (installed, metaclaw_skills::migrate_library(&dir))
    })
    .await;
    let (installed, migrated) = match done {
        Ok(done) => done,
        Err(e) => {
            tracing::warn!(error = %e, "could not install the built-in skills");
            return;
        }
    };
    match installed {
        Ok(report) => tracing::info!(
            dir = %shown,
            installed = report.installed.len(),
            updated = report.updated.len(),
            kept_user_edits = report.kept_user_edits.len(),
            "skill library ready"
        ),
        Err(e) => tracing::warn!(error = %e, "could not install the built-in skills"),
    }
    if let Some(backup) = &migrated.backup {
        tracing::info!(
            rewritten = migrated.rewritten.len(),
            backup = %backup.display(),
            "skill files rewritten in the Agent Skills format"
        );
    }
    for failure in &migrated.failed {
        tracing::warn!("skill file left as it is: {failure}");
    }
}

/// Models the background jobs call, resolved once at start (reading keys blocks).
pub(super) struct JobModels {
    pub evolver: Option<Endpoint>,
    pub embeddings: Option<Endpoint>,
    pub extractor: Option<Endpoint>,
}

impl JobModels {
    /// The model each learning purpose calls, as recorded in `learning_usage`.
    fn by_purpose(&self) -> std::collections::BTreeMap<String, String> {
        [
            ("evolution", &self.evolver),
            ("extraction", &self.extractor),
            ("embeddings", &self.embeddings),
        ]
        .into_iter()
        .filter_map(|(purpose, e)| Some((purpose.to_owned(), e.as_ref()?.model.clone())))
        .collect()
    }
}

/// Whether skills or memory retrieve by meaning, and so need an embeddings API.
pub(super) fn wants_embeddings(config: &Config) -> bool {
    config.skills.enabled && config.skills.retrieval_mode != SkillRetrieval::Template
        || config.memory.enabled && policies::semantic_mode(&config.memory).is_some()
}

fn upstream_status(
    proxy: &metaclaw_proxy::ProxyConfig,
    config: &Config,
    secrets: &SecretStore,
) -> Vec<UpstreamStatus> {
    proxy
        .upstreams
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let account = if i == 0 {
                LLM_KEY.to_string()
            } else {
                config
                    .llm
                    .fallbacks
                    .get(i - 1)
                    .map(|f| f.key_account())
                    .unwrap_or_default()
            };
            UpstreamStatus {
                name: u.name.clone(),
                protocol: u.protocol.as_str().to_string(),
                base_url: u.base_url.clone(),
                model: u.model.clone(),
                key_source: secrets
                    .source_of(&account)
                    .ok()
                    .flatten()
                    .map_or_else(|| "none".to_string(), |s| s.to_string()),
            }
        })
        .collect()
}
