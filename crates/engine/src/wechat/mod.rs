//! The WeChat channel, for `claw_type: openclaw`: OpenClaw's official WeChat plugin is
//! installed at start when `wechat.enabled` is on and it is missing, and "log in to WeChat
//! again" runs the plugin's QR login. Both run in the background; their progress is one
//! state the status, the tray, the dashboard and the terminal read (`GET /api/wechat`,
//! [`EngineEvent::Wechat`]). A failure is shown there and in the log; serving never waits.
//!
//! `wechat.enabled: false` leaves an installed plugin alone: removing it is the user's call
//! (`metaclaw uninstall` offers it).

mod job;
mod output;
pub mod qr;

/// The plugin itself: whether OpenClaw has it, and its commands (`metaclaw uninstall`).
pub use metaclaw_claws::wechat as plugin;

use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::agents;
use crate::config::{ClawType, Config};
use crate::events::{EngineEvent, Events};
use crate::supervise::Supervisor;

/// What the WeChat channel is doing, as the API and the UI name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Off,
    /// `wechat.enabled` with an agent other than OpenClaw.
    Unsupported,
    /// Enabled, and the plugin is not installed (yet).
    Missing,
    Installing,
    LoggingIn,
    WaitingForScan,
    Installed,
    Connected,
    Failed,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Off => "off",
            State::Unsupported => "unsupported",
            State::Missing => "missing",
            State::Installing => "installing",
            State::LoggingIn => "logging_in",
            State::WaitingForScan => "waiting_for_scan",
            State::Installed => "installed",
            State::Connected => "connected",
            State::Failed => "failed",
        }
    }
}

/// The QR code to scan: its link and the link drawn as an SVG image.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Qr {
    pub url: String,
    pub svg: String,
}

/// `GET /api/wechat`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct View {
    pub enabled: bool,
    /// `claw_type`.
    pub agent: String,
    /// The agent is OpenClaw, the only one the plugin exists for.
    pub supported: bool,
    pub installed: bool,
    pub state: State,
    /// The state in one sentence (status, tray, dashboard).
    pub line: String,
    /// An install or login is running.
    pub running: bool,
    pub qr: Option<Qr>,
    pub error: Option<String>,
}

/// Why a WeChat action was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WechatError {
    #[error(
        "WeChat works only with OpenClaw (claw_type is {0}): set claw_type to openclaw to use it"
    )]
    NotOpenClaw(String),
    #[error("a WeChat install or login is already running")]
    Busy,
    #[error(
        "OpenClaw's WeChat plugin is not installed: turn WeChat on (wechat.enabled) and MetaClaw installs it"
    )]
    NotInstalled,
}

/// Which command a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Job {
    Install,
    Login,
}

/// What the last or current job got to.
#[derive(Debug, Default)]
struct Progress {
    job: Option<Job>,
    running: bool,
    qr_url: Option<String>,
    connected: bool,
    /// The last job ended well (installed, or logged in).
    done: bool,
    error: Option<String>,
    /// Said after a good end (the gateway could not be restarted, say).
    note: Option<String>,
}

#[derive(Clone)]
pub struct Wechat {
    shared: Arc<Shared>,
}

struct Shared {
    enabled: bool,
    agent: String,
    events: Events,
    progress: Mutex<Progress>,
}

impl Wechat {
    pub fn new(config: &Config, events: Events) -> Wechat {
        Wechat {
            shared: Arc::new(Shared {
                enabled: config.wechat.enabled,
                agent: config.claw_type.name().to_owned(),
                events,
                progress: Mutex::new(Progress::default()),
            }),
        }
    }

    /// Whether this engine's agent can have the channel at all (OpenClaw).
    pub fn supported(&self) -> bool {
        self.shared.agent == ClawType::Openclaw.name()
    }

    /// At engine start: install the plugin when it is on and missing, or log in again
    /// (`metaclaw start --wechat-relogin`). Never fails the start.
    pub fn on_start(&self, tasks: &Supervisor, relogin: bool) {
        if !self.supported() {
            if self.shared.enabled || relogin {
                tracing::warn!(
                    "{}; nothing was installed or run",
                    WechatError::NotOpenClaw(self.shared.agent.clone())
                );
                self.changed();
            }
            return;
        }
        if relogin {
            if let Err(e) = self.login(tasks) {
                tracing::warn!("cannot log in to WeChat: {e}");
            }
            return;
        }
        if self.shared.enabled && !plugin_installed() {
            // Nothing runs yet at start.
            let _ = self.begin(tasks, Job::Install);
        }
    }

    /// "Log in to WeChat again": a new QR code, to link (or switch) the WeChat account.
    /// With the plugin missing and WeChat on, installs it (its installer logs in too).
    pub fn login(&self, tasks: &Supervisor) -> Result<View, WechatError> {
        if !self.supported() {
            return Err(WechatError::NotOpenClaw(self.shared.agent.clone()));
        }
        let job = if plugin_installed() {
            Job::Login
        } else if self.shared.enabled {
            Job::Install
        } else {
            return Err(WechatError::NotInstalled);
        };
        if !self.begin(tasks, job) {
            return Err(WechatError::Busy);
        }
        Ok(self.view())
    }

    /// Marks the job running (so a second ask is refused at once) and spawns it; `false`
    /// when one runs already.
    fn begin(&self, tasks: &Supervisor, job: Job) -> bool {
        {
            let mut p = self.lock();
            if p.running {
                return false;
            }
            *p = Progress {
                job: Some(job),
                running: true,
                ..Progress::default()
            };
        }
        self.changed();
        let me = self.clone();
        let stop = tasks.shutdown_token();
        let name = match job {
            Job::Install => "wechat plugin install",
            Job::Login => "wechat login",
        };
        tasks.spawn(name, async move { job::run(me, job, stop).await });
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Progress> {
        // A panic mid-update leaves plain data behind; keep going with it.
        self.shared
            .progress
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Updates the progress and tells the hosts.
    fn update(&self, f: impl FnOnce(&mut Progress)) {
        f(&mut self.lock());
        self.changed();
    }

    fn changed(&self) {
        let (state, line) = self.summary();
        let qr = {
            let p = self.lock();
            p.qr_url.clone().filter(|_| p.running)
        };
        self.shared.events.emit(EngineEvent::Wechat {
            state: state.name().to_owned(),
            line,
            qr,
        });
    }

    pub fn view(&self) -> View {
        let installed = self.supported() && plugin_installed();
        let p = self.lock();
        let (state, line) = self.said(&p, installed);
        let qr = p.qr_url.as_ref().filter(|_| p.running).and_then(|url| {
            qr::svg(url).map(|svg| Qr {
                url: url.clone(),
                svg,
            })
        });
        View {
            enabled: self.shared.enabled,
            agent: self.shared.agent.clone(),
            supported: self.supported(),
            installed,
            state,
            line,
            running: p.running,
            qr,
            error: p.error.clone(),
        }
    }

    /// The state and its sentence, without drawing the QR code (the tray's line).
    pub fn summary(&self) -> (State, String) {
        let installed = self.supported() && plugin_installed();
        self.said(&self.lock(), installed)
    }

    fn said(&self, p: &Progress, installed: bool) -> (State, String) {
        let state = self.state(p, installed);
        let line = match state {
            State::Off => "WeChat is off".to_owned(),
            State::Unsupported => format!(
                "WeChat works only with OpenClaw (claw_type is {}); nothing was installed",
                self.shared.agent
            ),
            State::Missing => {
                "OpenClaw's WeChat plugin is not installed; MetaClaw installs it at start".into()
            }
            State::Installing => "Installing OpenClaw's WeChat plugin…".into(),
            State::LoggingIn => "Starting the WeChat login…".into(),
            State::WaitingForScan => "Scan the QR code with WeChat on your phone".into(),
            State::Installed => "OpenClaw's WeChat plugin is installed".into(),
            State::Connected => "WeChat is connected to OpenClaw".into(),
            State::Failed => format!(
                "WeChat: {}",
                p.error.as_deref().unwrap_or("the last attempt failed")
            ),
        };
        let line = match (&p.note, state) {
            (Some(note), State::Installed | State::Connected) => format!("{line} ({note})"),
            _ => line,
        };
        (state, line)
    }

    fn state(&self, p: &Progress, installed: bool) -> State {
        if !self.supported() {
            return if self.shared.enabled {
                State::Unsupported
            } else {
                State::Off
            };
        }
        if p.running {
            return match (p.job, &p.qr_url) {
                (_, Some(_)) => State::WaitingForScan,
                (Some(Job::Install), None) => State::Installing,
                _ => State::LoggingIn,
            };
        }
        if p.error.is_some() {
            return State::Failed;
        }
        if p.done && p.connected {
            return State::Connected;
        }
        if installed {
            State::Installed
        } else if self.shared.enabled {
            State::Missing
        } else {
            State::Off
        }
    }
}

/// Whether OpenClaw has the plugin, on this machine's home.
fn plugin_installed() -> bool {
    agents::system_env().is_ok_and(|env| metaclaw_claws::wechat::installed(&env))
}
