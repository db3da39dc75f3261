//! Starting and stopping the engine. `Engine::start` runs four phases, one file each:
//! `resolve` (config, the instance lock, built-in skills, keys and models), `learners`
//! (the training windows, the recorder, skills, evolution, memory, weight learning),
//! `proxy_state` (the proxy with the engine's seams plugged in, bound to its port) and
//! `serve` (run files, the admin API, the server). `Engine::wait` stops them in reverse.

mod learners;
mod proxy_state;
mod resolve;
mod serve;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigError, Overrides};
use crate::events::{EngineEvent, Events};
use crate::paths::{Paths, PathsError};
use crate::recorder::RecorderWorker;
use crate::runfiles::{self, InstanceLock, RunError};
use crate::schedule::Windows;
use crate::secrets::SecretError;
use crate::skills::SkillsRuntime;
use crate::supervise::Supervisor;
use crate::wiring::WiringError;

/// How long shutdown and restart wait for background tasks before aborting them.
const TASKS_DEADLINE: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Paths(#[from] PathsError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error(transparent)]
    Wiring(#[from] WiringError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("cannot open the database: {0}")]
    Recorder(String),
    #[error("{0}")]
    Bind(String),
    /// The proxy's port is held by another program (the desktop app offers another port).
    #[error("{message}")]
    PortBusy { port: u16, message: String },
    #[error("internal task failed: {0}")]
    Task(String),
}

#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    pub overrides: Overrides,
    /// The admin token to publish instead of a fresh one (kept across a restart).
    pub admin_token: Option<String>,
    /// The host's event bus: it outlives restarts, so the host subscribes once.
    pub events: Events,
    /// Run the WeChat plugin's QR login once serving (`metaclaw start --wechat-relogin`).
    pub wechat_relogin: bool,
}

impl StartOptions {
    /// The options for starting again after `engine` stopped for a restart: same address,
    /// same admin token, same event bus; the config file is read afresh.
    pub fn for_restart(mut self, addr: SocketAddr, admin_token: &str) -> Self {
        self.overrides.port = Some(addr.port());
        self.admin_token = Some(admin_token.to_owned());
        // Asked for once, at the first start.
        self.wechat_relogin = false;
        self
    }
}

/// Asks a running engine to stop so its host starts it again ([`Stopped::Restart`]): what
/// `POST /api/restart` and the tray's Mode ▸ do.
#[derive(Debug, Clone)]
pub struct RestartHandle {
    asked: Arc<AtomicBool>,
    shutdown: CancellationToken,
    events: Events,
}

impl RestartHandle {
    pub fn restart(&self) {
        self.asked.store(true, Ordering::SeqCst);
        self.events.emit(EngineEvent::Restarting);
        self.shutdown.cancel();
    }

    fn asked(&self) -> bool {
        self.asked.load(Ordering::SeqCst)
    }
}

/// Why [`Engine::wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Signal, `metaclaw stop`, Quit: the host exits.
    Shutdown,
    /// New settings were applied (`POST /api/restart`): the host starts the engine again with
    /// [`StartOptions::for_restart`].
    Restart,
}

/// A running engine. Dropping it without [`Engine::wait`] leaves the server task running until
/// the process exits; call [`Engine::shutdown`] then `wait` for a clean stop.
pub struct Engine {
    addr: SocketAddr,
    shutdown: CancellationToken,
    server: oneshot::Receiver<std::io::Result<()>>,
    tasks: Supervisor,
    recorder: RecorderWorker,
    skills: Option<SkillsRuntime>,
    paths: Paths,
    scheduler: Windows,
    admin_token: String,
    restart: RestartHandle,
    events: Events,
    wechat: crate::wechat::Wechat,
    updates: crate::updates::Updates,
    _lock: InstanceLock,
}

impl Engine {
    pub async fn start(paths: Paths, options: StartOptions) -> Result<Engine, EngineError> {
        paths.ensure_dirs()?;
        let (resolved, models, lock) = resolve::resolve(&paths, options.overrides).await?;
        let shutdown = CancellationToken::new();
        let tasks = Supervisor::new(shutdown.clone());
        let learners = learners::start(&resolved, models, &paths, &options.events, &tasks).await?;
        let (state, listener, addr) =
            proxy_state::build(&resolved, &learners, &paths, &options.events).await?;
        learners::follow(&learners, &resolved.config, &state, addr, &tasks);
        let restart = RestartHandle {
            asked: Arc::new(AtomicBool::new(false)),
            shutdown: shutdown.clone(),
            events: options.events.clone(),
        };
        let served = serve::serve(
            serve::Serving {
                resolved,
                learners: &learners,
                paths: &paths,
                state,
                listener,
                addr,
                restart: restart.clone(),
                tasks: &tasks,
            },
            &options,
        )?;
        options.events.emit(EngineEvent::Started {
            addr: addr.to_string(),
        });
        Ok(Engine {
            addr,
            shutdown,
            server: served.server,
            tasks,
            recorder: learners.worker,
            skills: learners.skills,
            paths,
            scheduler: learners.windows,
            admin_token: served.token,
            restart,
            events: options.events,
            wechat: served.wechat,
            updates: served.updates,
            _lock: lock,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Cancel to stop the engine (signals, `metaclaw stop`, the tray's Quit).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// The training windows (the tray's learning line, Pause and Resume).
    pub fn scheduler(&self) -> Windows {
        self.scheduler.clone()
    }

    /// The admin token this run published (the desktop window passes it to the UI).
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// For a host that restarts the engine itself (the tray's Mode ▸).
    pub fn restart_handle(&self) -> RestartHandle {
        self.restart.clone()
    }

    /// The WeChat channel (the tray's "Log in to WeChat again").
    pub fn wechat(&self) -> crate::wechat::Wechat {
        self.wechat.clone()
    }

    /// Whether a newer version exists, or is installed already (the tray's update item).
    pub fn updates(&self) -> crate::updates::Updates {
        self.updates.clone()
    }

    /// For hosts that start jobs the engine owns (a WeChat login from the tray).
    pub fn tasks(&self) -> Supervisor {
        self.tasks.clone()
    }

    /// The bus the engine reports on (the one passed in [`StartOptions`]).
    pub fn events(&self) -> Events {
        self.events.clone()
    }

    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }

    /// Waits until shutdown, then drains the recorder and removes the run files. Says whether
    /// the host should start the engine again.
    pub async fn wait(self) -> Result<Stopped, EngineError> {
        let served = self.server.await;
        // Dropping the library's watcher ends its reload task; every other task watches
        // the token or ends with its queue. Learning steps and extractions in progress get
        // a moment to finish their writes before the recorder drains.
        drop(self.skills);
        self.shutdown.cancel();
        self.tasks.join(TASKS_DEADLINE).await;
        // The server ended every open session; those events are queued before this drain.
        let worker = self.recorder;
        let drained = tokio::task::spawn_blocking(move || worker.shutdown())
            .await
            .map_err(|e| EngineError::Task(e.to_string()))?;
        runfiles::clear_if_owned(&self.paths, std::process::id())?;
        drained.map_err(|e| EngineError::Recorder(e.to_string()))?;
        match served {
            Ok(Ok(())) if self.restart.asked() => Ok(Stopped::Restart),
            Ok(Ok(())) => Ok(Stopped::Shutdown),
            Ok(Err(e)) => Err(EngineError::Bind(e.to_string())),
            Err(_) => Err(EngineError::Task(
                "the proxy server stopped unexpectedly".into(),
            )),
        }
    }
}
