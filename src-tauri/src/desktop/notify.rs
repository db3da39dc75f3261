//! Desktop notifications for what the engine reports: new skills, a provider refusing the
//! key, a finished training step. The wording and the throttle are plain code (tested without
//! a desktop); showing goes through the session's notification server.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use metaclaw_engine::events::{EngineEvent, Events};
use tokio::sync::broadcast::error::RecvError;

/// A refused key fails every request until it is fixed: say so once per upstream per this.
pub const AUTH_REPEAT: Duration = Duration::from_secs(10 * 60);

/// At most this many skill names in one notification.
const NAMES_SHOWN: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub summary: String,
    pub body: String,
}

/// Decides which events become notifications, and what they say.
#[derive(Debug, Default)]
pub struct Notifier {
    last_auth: HashMap<String, Instant>,
    /// The WeChat state last told, so each change is told once.
    last_wechat: Option<String>,
}

impl Notifier {
    pub fn note(&mut self, event: &EngineEvent, now: Instant) -> Option<Note> {
        match event {
            EngineEvent::SkillsLearned { names } if !names.is_empty() => {
                let (n, shown) = (names.len(), listed(names));
                let noun = if n == 1 { "skill" } else { "skills" };
                Some(Note {
                    summary: "MetaClaw learned something".into(),
                    body: format!("Learned {n} new {noun}: {shown}"),
                })
            }
            EngineEvent::SkillProposed { names } if !names.is_empty() => {
                let (n, shown) = (names.len(), listed(names));
                let noun = if n == 1 { "skill waits" } else { "skills wait" };
                Some(Note {
                    summary: "MetaClaw proposes a skill".into(),
                    body: format!(
                        "{n} learned {noun} for your approval: {shown}. Review in Skills."
                    ),
                })
            }
            EngineEvent::UpstreamAuthFailed { upstream, status } => {
                let recent = self
                    .last_auth
                    .get(upstream)
                    .is_some_and(|at| now.duration_since(*at) < AUTH_REPEAT);
                if recent {
                    return None;
                }
                self.last_auth.insert(upstream.clone(), now);
                Some(Note {
                    summary: "MetaClaw cannot reach your model".into(),
                    body: format!(
                        "Your provider refused the API key ({upstream} answered {status}). Open Settings in MetaClaw to enter a working key."
                    ),
                })
            }
            EngineEvent::TrainingFinished { step, reward } => Some(Note {
                summary: "MetaClaw finished training".into(),
                body: match reward {
                    Some(r) => format!("Training step {step} finished (average reward {r:.2})."),
                    None => format!("Training step {step} finished."),
                },
            }),
            EngineEvent::UpdateAvailable { version, apply } => Some(Note {
                summary: format!("MetaClaw {version} is available"),
                body: format!("To install it: {apply}"),
            }),
            EngineEvent::RestartOffered { version } => Some(Note {
                summary: format!("MetaClaw {version} is installed"),
                body: "Choose \"Restart MetaClaw\" in the tray menu to run it.".into(),
            }),
            EngineEvent::Wechat { state, line, .. } => {
                if self.last_wechat.as_ref() == Some(state) {
                    return None;
                }
                self.last_wechat = Some(state.clone());
                let summary = match state.as_str() {
                    "waiting_for_scan" => "Scan the QR code with WeChat",
                    "connected" => "WeChat is connected",
                    "failed" | "unsupported" => "WeChat could not be set up",
                    _ => return None,
                };
                let body = if state == "waiting_for_scan" {
                    "Open MetaClaw's dashboard: the QR code is there.".to_owned()
                } else {
                    line.clone()
                };
                Some(Note {
                    summary: summary.into(),
                    body,
                })
            }
            _ => None,
        }
    }
}

/// The first few names, and how many more.
fn listed(names: &[String]) -> String {
    let mut shown = names
        .iter()
        .take(NAMES_SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NAMES_SHOWN {
        shown.push_str(&format!(" and {} more", names.len() - NAMES_SHOWN));
    }
    shown
}

/// Shows notifications for the bus's events until the bus closes. Subscribed once: the bus
/// outlives engine restarts.
pub fn follow(events: &Events) {
    let mut rx = events.subscribe();
    tokio::spawn(async move {
        let mut notifier = Notifier::default();
        loop {
            let event = match rx.recv().await {
                Ok(e) => e,
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            };
            if let Some(note) = notifier.note(&event, Instant::now()) {
                // The notification server is a D-Bus call that may block.
                tokio::task::spawn_blocking(move || show(&note));
            }
        }
    });
}

/// Says that MetaClaw stopped on an error (a restart that could not start again), before the
/// app exits: with no window open, the tray icon would otherwise just vanish.
/// Tells `summary` and `body` now (start-up problems, the take-over of a running engine).
pub async fn tell(summary: &str, body: String) {
    let note = Note {
        summary: summary.to_owned(),
        body,
    };
    let _ = tokio::task::spawn_blocking(move || show(&note)).await;
}

pub async fn stopped(error: String) {
    let note = Note {
        summary: "MetaClaw stopped".into(),
        body: format!("MetaClaw could not keep running: {error}"),
    };
    let _ = tokio::task::spawn_blocking(move || show(&note)).await;
}

fn show(note: &Note) {
    let shown = notify_rust::Notification::new()
        .appname("MetaClaw")
        .summary(&note.summary)
        .body(&note.body)
        .show();
    if let Err(e) = shown {
        tracing::warn!("cannot show a notification: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposed_skills_ask_for_review() {
        let mut n = Notifier::default();
        let names = vec!["tea-brewing".into()];
        let note = n
            .note(&EngineEvent::SkillProposed { names }, Instant::now())
            .unwrap();
        assert_eq!(note.summary, "MetaClaw proposes a skill");
        assert_eq!(
            note.body,
            "1 learned skill waits for your approval: tea-brewing. Review in Skills."
        );
    }

    #[test]
    fn learned_skills_are_named() {
        let mut n = Notifier::default();
        let note = n
            .note(
                &EngineEvent::SkillsLearned {
                    names: vec!["git-bisect".into()],
                },
                Instant::now(),
            )
            .unwrap();
        assert_eq!(note.body, "Learned 1 new skill: git-bisect");
        let many: Vec<String> = (1..=5).map(|i| format!("s{i}")).collect();
        let note = n
            .note(&EngineEvent::SkillsLearned { names: many }, Instant::now())
            .unwrap();
        assert_eq!(note.body, "Learned 5 new skills: s1, s2, s3 and 2 more");
        assert!(
            n.note(
                &EngineEvent::SkillsLearned { names: vec![] },
                Instant::now()
            )
            .is_none()
        );
    }

    #[test]
    fn a_refused_key_is_told_once_per_upstream_per_ten_minutes() {
        let mut n = Notifier::default();
        let refused = |u: &str| EngineEvent::UpstreamAuthFailed {
            upstream: u.into(),
            status: 401,
        };
        let t0 = Instant::now();
        let first = n.note(&refused("openai"), t0).unwrap();
        assert!(first.body.starts_with("Your provider refused the API key"));
        assert!(first.body.contains("openai answered 401"));
        assert!(
            n.note(&refused("openai"), t0 + Duration::from_secs(60))
                .is_none()
        );
        assert!(
            n.note(&refused("backup"), t0 + Duration::from_secs(60))
                .is_some()
        );
        assert!(
            n.note(
                &refused("openai"),
                t0 + AUTH_REPEAT - Duration::from_secs(1)
            )
            .is_none()
        );
        assert!(n.note(&refused("openai"), t0 + AUTH_REPEAT).is_some());
    }

    #[test]
    fn wechat_changes_are_told_once_each() {
        let mut n = Notifier::default();
        let at = |state: &str, line: &str| EngineEvent::Wechat {
            state: state.into(),
            line: line.into(),
            qr: None,
        };
        let now = Instant::now();
        assert!(n.note(&at("installing", "Installing…"), now).is_none());
        let scan = n.note(&at("waiting_for_scan", "Scan"), now).unwrap();
        assert!(scan.body.contains("dashboard"));
        assert!(n.note(&at("waiting_for_scan", "Scan"), now).is_none());
        let failed = n
            .note(&at("failed", "WeChat: `npx` is not on PATH"), now)
            .unwrap();
        assert_eq!(failed.summary, "WeChat could not be set up");
        assert_eq!(failed.body, "WeChat: `npx` is not on PATH");
        assert!(
            n.note(&at("connected", "WeChat is connected"), now)
                .is_some()
        );
    }

    #[test]
    fn training_and_quiet_events() {
        let mut n = Notifier::default();
        let note = n
            .note(
                &EngineEvent::TrainingFinished {
                    step: 7,
                    reward: Some(0.4251),
                },
                Instant::now(),
            )
            .unwrap();
        assert_eq!(note.body, "Training step 7 finished (average reward 0.43).");
        assert!(
            n.note(&EngineEvent::MemoryChanged, Instant::now())
                .is_none()
        );
        assert!(n.note(&EngineEvent::Restarting, Instant::now()).is_none());
    }
}
