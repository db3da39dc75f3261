//! The team library in the background: with `skills.sync.remote` set, a sync every
//! `skills.sync.interval_minutes` and soon after a skill is learned. A failed sync is
//! logged and retried at the next occasion, after a pause that doubles up to the interval
//! (the remote may be down for hours; the library keeps serving meanwhile).

use std::path::PathBuf;
use std::time::Duration;

use metaclaw_skills::team::{SyncReport, Team, sync};
use tokio::sync::broadcast::error::RecvError;

use crate::config::Config;
use crate::events::{EngineEvent, Events};
use crate::paths::Paths;
use crate::supervise::Supervisor;

/// The first retry after a failure; it doubles up to the interval.
const FIRST_RETRY: Duration = Duration::from_secs(30);
/// A learned skill is sent after this quiet time, so a burst of evolutions is one sync.
const AFTER_LEARNING: Duration = Duration::from_secs(5);

/// The team of `config`, or `None` without a remote.
pub fn team(config: &Config, paths: &Paths) -> Option<Team> {
    let s = &config.skills.sync;
    (!s.remote.trim().is_empty()).then(|| Team {
        remote: s.remote.trim().to_owned(),
        branch: s.branch.clone(),
        clone: paths.home.join("skills-team"),
        who: s.member(),
    })
}

/// Starts the background sync when a remote is configured.
pub fn start(config: &Config, paths: &Paths, events: &Events, tasks: &Supervisor) {
    let Some(team) = team(config, paths) else {
        return;
    };
    let library = config.skills_dir(paths);
    let minutes = config.skills.sync.interval_minutes;
    let interval = (minutes > 0).then(|| Duration::from_secs(u64::from(minutes) * 60));
    let (events, shutdown) = (events.clone(), tasks.shutdown_token());
    tasks.spawn("skills team sync", async move {
        let mut learned = events.subscribe();
        let mut pause = FIRST_RETRY;
        loop {
            let ok = run_once(library.clone(), team.clone()).await;
            let wait = match (ok, interval) {
                (true, Some(every)) => {
                    pause = FIRST_RETRY;
                    every
                }
                (false, Some(every)) => {
                    let wait = pause.min(every);
                    pause = (pause * 2).min(every);
                    wait
                }
                (_, None) => Duration::MAX,
            };
            let next = tokio::time::sleep(wait.min(Duration::from_secs(86_400 * 365)));
            tokio::pin!(next);
            // Until the timer, a learned skill (then a short quiet time), or shutdown.
            loop {
                tokio::select! {
                    () = &mut next => break,
                    () = shutdown.cancelled() => return,
                    event = learned.recv() => match event {
                        Ok(EngineEvent::SkillsLearned { .. }) | Err(RecvError::Lagged(_)) => {
                            tokio::select! {
                                () = tokio::time::sleep(AFTER_LEARNING) => break,
                                () = shutdown.cancelled() => return,
                            }
                        }
                        Ok(_) => {}
                        Err(RecvError::Closed) => return,
                    },
                }
            }
        }
    });
}

async fn run_once(library: PathBuf, team: Team) -> bool {
    let done = tokio::task::spawn_blocking(move || sync(&library, &team)).await;
    match done {
        Ok(Ok(report)) => {
            log(&report);
            report.waiting.is_none()
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "skills team sync failed; retrying later");
            false
        }
        Err(e) => {
            tracing::warn!(error = %e, "skills team sync stopped; retrying later");
            false
        }
    }
}

fn log(r: &SyncReport) {
    if let Some(why) = &r.waiting {
        tracing::warn!(reason = %why, "skills team sync is waiting; changes kept for the next one");
    }
    if r.sent.is_empty() && r.received.is_empty() && r.deleted.is_empty() {
        tracing::debug!("skills team sync: nothing changed");
    } else {
        tracing::info!(sent = ?r.sent, received = ?r.received, deleted = ?r.deleted, "skills team sync");
    }
    for (name, reasons) in &r.quarantined {
        let rules: Vec<&str> = reasons.iter().map(|f| f.rule.as_str()).collect();
        tracing::warn!(skill = %name, rules = ?rules, "team skill quarantined by the safety gate");
    }
    for c in &r.conflicts {
        tracing::warn!(conflict = %c, "skills team sync kept two versions");
    }
}
