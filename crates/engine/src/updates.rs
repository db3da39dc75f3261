//! Updates, wired in: a task looks for a newer version at start and then daily
//! (`updates.check`), backing off after a failure, and notices when the program file was
//! replaced under the running process (a package upgrade), so status, the dashboard and the
//! tray can say so. The checking itself is `metaclaw-updates`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use metaclaw_updates::{ExeWatch, Outcome, Sources};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::config::{UpdateCheck, UpdatesConfig};
use crate::events::{EngineEvent, Events};
use crate::supervise::Supervisor;

/// Between successful checks.
const DAY: Duration = Duration::from_secs(24 * 3600);
/// After a failed check: an hour, doubling up to a day.
const FIRST_RETRY: Duration = Duration::from_secs(3600);
/// How often the program file is looked at (one stat) besides when its folder changes.
const EXE_POLL: Duration = Duration::from_secs(60);
/// A check's whole budget (two small GETs and gpgv).
const CHECK_DEADLINE: Duration = Duration::from_secs(60);

/// What status and the dashboard show.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateStatus {
    /// `daily` or `never`.
    pub check: String,
    /// The running version.
    pub current: String,
    /// Where the last check looked: `apt`, `manifest`, `none`.
    pub source: Option<String>,
    pub from: Option<String>,
    /// A newer version to install.
    pub available: Option<String>,
    /// How to install it (MetaClaw does not, on Linux).
    pub apply: Option<String>,
    /// Why the last check could not tell.
    pub error: Option<String>,
    pub checked_at_ms: Option<i64>,
    /// The program file was replaced by this version: a restart runs it.
    pub restart_to: Option<String>,
    /// One sentence for status and the tray; `None` when there is nothing to say.
    pub line: Option<String>,
}

impl UpdateStatus {
    /// What one check found, for a process that is not the running engine
    /// (`metaclaw update check` while MetaClaw is not running).
    pub fn found(config: &UpdatesConfig, outcome: Outcome) -> UpdateStatus {
        let mut s = UpdateStatus {
            check: check_name(config.check).into(),
            current: metaclaw_updates::version::current().to_owned(),
            ..UpdateStatus::default()
        };
        s.apply_outcome(outcome);
        s.with_line()
    }

    fn apply_outcome(&mut self, o: Outcome) {
        self.source = Some(o.source.to_owned());
        self.from = o.from;
        self.available = o.available;
        self.apply = o.apply.map(str::to_owned);
        self.error = o.error;
        self.checked_at_ms = Some(crate::clock::unix_ms(std::time::SystemTime::now()));
    }

    fn with_line(mut self) -> Self {
        self.line = if let Some(v) = &self.restart_to {
            Some(format!(
                "MetaClaw {v} is installed (running {}): restart MetaClaw to use it",
                self.current
            ))
        } else if let Some(v) = &self.available {
            Some(format!(
                "MetaClaw {v} is available (running {}); to install it: {}",
                self.current,
                self.apply.as_deref().unwrap_or("")
            ))
        } else if let Some(e) = &self.error {
            Some(format!("could not look for updates: {e}"))
        } else if self.check == "never" {
            Some("not looked for (updates.check: never)".into())
        } else if self.source.as_deref() == Some("none") {
            Some("not looked for: a build from source looks only with updates.manifest_url".into())
        } else {
            self.checked_at_ms
                .map(|_| format!("up to date ({})", self.current))
        };
        self
    }
}

/// The engine's view of updates, shared with the admin API.
#[derive(Clone)]
pub struct Updates {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<UpdateStatus>,
    sources: Sources,
    /// `None` when no HTTP client could be built (said in the status).
    client: Option<reqwest::Client>,
    events: Events,
}

impl Updates {
    /// Starts the checks (unless `never`) and the program-file watch.
    pub fn start(config: &UpdatesConfig, events: Events, tasks: &Supervisor) -> Updates {
        let client = reqwest::Client::builder()
            .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .timeout(CHECK_DEADLINE)
            .build()
            .inspect_err(|e| tracing::warn!(error = %e, "updates cannot be looked for"))
            .ok();
        let state = UpdateStatus {
            check: check_name(config.check).into(),
            current: metaclaw_updates::version::current().to_owned(),
            ..UpdateStatus::default()
        }
        .with_line();
        let updates = Updates {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                sources: sources(config),
                client,
                events,
            }),
        };
        let task = Task {
            updates: updates.clone(),
            checking: config.check == UpdateCheck::Daily,
            shutdown: tasks.shutdown_token(),
        };
        tasks.spawn("updates", task.run());
        updates
    }

    pub fn status(&self) -> UpdateStatus {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Looks now (whatever `updates.check` says: the user asked), and records what it found.
    pub async fn check_now(&self) -> UpdateStatus {
        let outcome = match &self.inner.client {
            Some(client) => metaclaw_updates::check(client, &self.inner.sources).await,
            None => Outcome {
                current: metaclaw_updates::version::current().to_owned(),
                available: None,
                newest: None,
                source: "none",
                from: None,
                apply: None,
                error: Some("no HTTP client".into()),
            },
        };
        self.record(outcome)
    }

    fn update(&self, f: impl FnOnce(&mut UpdateStatus)) -> UpdateStatus {
        let mut s = self
            .inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(&mut s);
        *s = s.clone().with_line();
        s.clone()
    }

    fn record(&self, o: Outcome) -> UpdateStatus {
        let now = self.update(|s| s.apply_outcome(o));
        if let Some(v) = &now.available
            && first_time(&ANNOUNCED, v)
        {
            tracing::info!(version = %v, "a newer MetaClaw is available");
            self.inner.events.emit(EngineEvent::UpdateAvailable {
                version: v.clone(),
                apply: now.apply.clone().unwrap_or_default(),
            });
        }
        now
    }

    /// Offers a restart once the program file was replaced.
    async fn look_at_the_program_file(&self) {
        if self.status().restart_to.is_some() {
            return;
        }
        let Some(exe) = ExeWatch::process() else {
            return;
        };
        if !exe.changed() {
            return;
        }
        let version = exe
            .version_on_disk()
            .await
            .unwrap_or_else(|| "a new version".into());
        tracing::info!(%version, path = %exe.path().display(), "the program file was replaced: a restart runs it");
        self.update(|s| s.restart_to = Some(version.clone()));
        if first_time(&OFFERED, &version) {
            self.inner
                .events
                .emit(EngineEvent::RestartOffered { version });
        }
    }
}

/// The versions told of already in this process: an engine restarted in place (new
/// settings) checks again, but does not tell again.
static ANNOUNCED: Mutex<Option<String>> = Mutex::new(None);
static OFFERED: Mutex<Option<String>> = Mutex::new(None);

/// Whether `version` is news for `told`, remembering it.
fn first_time(told: &Mutex<Option<String>>, version: &str) -> bool {
    let mut told = told.lock().unwrap_or_else(PoisonError::into_inner);
    if told.as_deref() == Some(version) {
        return false;
    }
    *told = Some(version.to_owned());
    true
}

fn check_name(check: UpdateCheck) -> &'static str {
    match check {
        UpdateCheck::Daily => "daily",
        UpdateCheck::Never => "never",
    }
}

/// The package's apt source (`METACLAW_APT_SOURCES` names another file, for tests and
/// unusual installs), and the manifest for builds from source.
pub fn sources(config: &UpdatesConfig) -> Sources {
    Sources {
        apt_sources: std::env::var_os("METACLAW_APT_SOURCES")
            .map_or_else(|| metaclaw_updates::SOURCES_PATH.into(), Into::into),
        manifest_url: config.manifest_url(),
    }
}

struct Task {
    updates: Updates,
    checking: bool,
    shutdown: CancellationToken,
}

impl Task {
    async fn run(self) {
        let wake = Arc::new(tokio::sync::Notify::new());
        let _watcher = ExeWatch::process().and_then(|exe| exe.watch_folder(wake.clone()));
        let mut next_check = tokio::time::Instant::now();
        let mut retry = FIRST_RETRY;
        loop {
            if self.checking && tokio::time::Instant::now() >= next_check {
                let found = self.updates.check_now().await;
                let wait = if let Some(e) = &found.error {
                    tracing::info!(error = %e, "update check failed; retrying in {retry:?}");
                    let wait = retry;
                    retry = (retry * 2).min(DAY);
                    wait
                } else {
                    retry = FIRST_RETRY;
                    DAY
                };
                next_check = tokio::time::Instant::now() + wait;
            }
            self.updates.look_at_the_program_file().await;
            let poll = tokio::time::Instant::now() + EXE_POLL;
            let until = if self.checking {
                next_check.min(poll)
            } else {
                poll
            };
            tokio::select! {
                () = self.shutdown.cancelled() => return,
                () = tokio::time::sleep_until(until) => {}
                () = wake.notified() => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_the_most_useful_thing() {
        let base = UpdateStatus {
            check: "daily".into(),
            current: "0.1.0".into(),
            ..UpdateStatus::default()
        };
        assert_eq!(base.clone().with_line().line, None);
        let available = UpdateStatus {
            available: Some("0.2.0".into()),
            apply: Some(metaclaw_updates::APPLY_APT.into()),
            ..base.clone()
        };
        let line = available.clone().with_line().line.unwrap_or_default();
        assert!(
            line.contains("0.2.0 is available (running 0.1.0)"),
            "{line}"
        );
        assert!(line.contains("apt upgrade metaclaw"), "{line}");
        let installed = UpdateStatus {
            restart_to: Some("0.2.0".into()),
            ..available
        };
        let line = installed.with_line().line.unwrap_or_default();
        assert!(line.contains("restart MetaClaw"), "{line}");
        let never = UpdateStatus {
            check: "never".into(),
            ..base
        };
        assert!(never.with_line().line.unwrap_or_default().contains("never"));
    }
}
