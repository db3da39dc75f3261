//! The engine's life inside the desktop app: started once before the window, started again in
//! place when new settings ask for it (the admin API's restart, or a mode chosen in the tray),
//! stopped by Quit, a signal or `metaclaw stop`. The tray and window follow whichever engine
//! is current through [`Host::live`].

use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use metaclaw_engine::config::{Config, Mode, Overrides};
use metaclaw_engine::events::Events;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::run::{Engine, EngineError, RestartHandle, StartOptions, Stopped};
use metaclaw_engine::schedule::Windows;
use metaclaw_engine::supervise::Supervisor;
use metaclaw_engine::wechat::Wechat;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// What the shell needs of the current engine.
#[derive(Clone)]
pub struct Live {
    pub windows: Windows,
    pub addr: SocketAddr,
    pub token: String,
    pub mode: Mode,
    pub wechat: Wechat,
    /// The engine's task owner (a WeChat login started from the tray runs there).
    pub tasks: Supervisor,
    /// A newer version to install, or installed already (the tray's update item).
    pub updates: metaclaw_engine::updates::Updates,
}

pub struct Host {
    pub paths: Paths,
    pub events: Events,
    /// Quit, signals: cancelled once, relayed to whichever engine runs.
    pub quit: CancellationToken,
    live: watch::Sender<Live>,
    /// The current engine's, for the tray's restarts.
    restart: Mutex<RestartHandle>,
    /// A mode chosen in the tray replaces a `--mode` given at start.
    drop_mode_override: AtomicBool,
    /// "Restart MetaClaw" was chosen: once stopped, the app runs the new program file.
    relaunch: AtomicBool,
}

impl Host {
    /// Starts the first engine (errors such as a busy port or another running MetaClaw stop
    /// the app here, before any window opens).
    pub async fn start(
        paths: Paths,
        options: &StartOptions,
    ) -> Result<(std::sync::Arc<Host>, Engine), EngineError> {
        let engine = Engine::start(paths.clone(), options.clone()).await?;
        let host = Host {
            live: watch::Sender::new(live_of(&engine, &paths, &options.overrides)),
            restart: Mutex::new(engine.restart_handle()),
            events: options.events.clone(),
            paths,
            quit: CancellationToken::new(),
            drop_mode_override: AtomicBool::new(false),
            relaunch: AtomicBool::new(false),
        };
        Ok((std::sync::Arc::new(host), engine))
    }

    pub fn live(&self) -> Live {
        self.live.borrow().clone()
    }

    pub fn watch(&self) -> watch::Receiver<Live> {
        self.live.subscribe()
    }

    /// The dashboard (or another screen) with the admin token in the fragment, which never
    /// reaches a server log.
    pub fn url(&self, screen: Option<&str>) -> String {
        let live = self.live();
        let screen = screen.map(|s| format!("&screen={s}")).unwrap_or_default();
        format!("http://{}/ui/#token={}{screen}", live.addr, live.token)
    }

    /// Writes `mode` the way `metaclaw config set mode X` does (comments kept), then starts
    /// the engine again so it takes effect.
    pub fn set_mode(&self, mode: Mode) -> Result<(), String> {
        let store =
            metaclaw_engine::secrets::SecretStore::open(&self.paths).map_err(|e| e.to_string())?;
        metaclaw_engine::config::set(&self.paths, "mode", &mode.to_string(), &store)
            .map_err(|e| e.to_string())?;
        self.drop_mode_override.store(true, Ordering::SeqCst);
        self.restart();
        Ok(())
    }

    /// Restarts into the program file now on disk (a package upgrade replaced it): waits for
    /// a training step that runs to end, then stops as Quit does (sessions end cleanly); the
    /// app then runs the new file ([`Host::relaunching`]).
    pub async fn restart_into_new_version(&self) {
        let mut steps = self.live().windows.watch();
        let running = |s: &metaclaw_schedule::machine::Snapshot| {
            matches!(s.phase, metaclaw_schedule::machine::Phase::Running { .. })
        };
        if running(&steps.borrow_and_update()) {
            tracing::info!("restart chosen during a training step; restarting once it ends");
            super::notify::tell(
                "MetaClaw restarts after this training step",
                "A training step is running; MetaClaw restarts as soon as it ends.".into(),
            )
            .await;
            tokio::select! {
                _ = steps.wait_for(|s| !running(s)) => {}
                () = self.quit.cancelled() => return,
            }
        }
        tracing::info!("restarting into the new version");
        self.relaunch.store(true, Ordering::SeqCst);
        self.quit.cancel();
    }

    /// Whether the app should run the new program file once stopped.
    pub fn relaunching(&self) -> bool {
        self.relaunch.load(Ordering::SeqCst)
    }

    /// Stops the current engine so [`Host::serve`] starts it again.
    pub fn restart(&self) {
        if let Ok(current) = self.restart.lock() {
            current.restart();
        }
    }

    /// Runs engines until one stops for good; `Ok` is a clean shutdown.
    pub async fn serve(
        &self,
        mut engine: Engine,
        mut options: StartOptions,
    ) -> Result<(), EngineError> {
        loop {
            let stop = engine.shutdown_token();
            let relay = {
                let quit = self.quit.clone();
                tokio::spawn(async move {
                    quit.cancelled().await;
                    stop.cancel();
                })
            };
            let (addr, token) = (engine.addr(), engine.admin_token().to_owned());
            let stopped = engine.wait().await;
            relay.abort();
            if self.quit.is_cancelled() || stopped? == Stopped::Shutdown {
                return Ok(());
            }
            tracing::info!("starting again with the new settings");
            options = options.for_restart(addr, &token);
            if self.drop_mode_override.swap(false, Ordering::SeqCst) {
                options.overrides.mode = None;
            }
            engine = Engine::start(self.paths.clone(), options.clone()).await?;
            if let Ok(mut current) = self.restart.lock() {
                *current = engine.restart_handle();
            }
            self.live
                .send_replace(live_of(&engine, &self.paths, &options.overrides));
        }
    }
}

fn live_of(engine: &Engine, paths: &Paths, overrides: &Overrides) -> Live {
    Live {
        windows: engine.scheduler(),
        addr: engine.addr(),
        token: engine.admin_token().to_owned(),
        mode: effective_mode(paths, overrides),
        wechat: engine.wechat(),
        tasks: engine.tasks(),
        updates: engine.updates(),
    }
}

/// The mode the engine just read: the file's, unless `--mode` overrides it.
fn effective_mode(paths: &Paths, overrides: &Overrides) -> Mode {
    overrides.mode.unwrap_or_else(|| {
        Config::load(paths)
            .map(|l| l.config.mode)
            .unwrap_or_default()
    })
}
