//! The desktop shell: the engine runs inside this process, with a tray icon (state, agent and
//! learning lines, Pause/Resume, Train now, Mode, Open dashboard, Settings, Start at login,
//! Quit) and a window that loads the engine's UI. Closing the window keeps the app in the
//! tray; Quit stops the engine the way `metaclaw stop` does and exits once it has drained.
//! One app at a time: a second launch shows the first one's window and exits. An engine
//! already running for the same home (a daemon) is taken over (`takeover.rs`); an engine that
//! cannot start is explained in a dialog (`failure.rs`), never only on stderr.

#[cfg(any(target_os = "macos", target_os = "windows"))]
mod app_updater;
mod failure;
mod host;
pub mod menu;
mod notify;
mod port_holder;
mod relaunch;
mod single;
mod takeover;
mod train;
mod tray;

use std::sync::{Arc, Mutex};

use metaclaw_engine::config::Overrides;
use metaclaw_engine::events::Events;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::run::{EngineError, StartOptions};
use metaclaw_engine::secrets::SecretStore;
use tauri::{AppHandle, Manager, RunEvent, WebviewUrl, WebviewWindowBuilder, WindowEvent};

use crate::exit::{Failure, Outcome};
use host::Host;
use takeover::TakenOver;

const WINDOW_LABEL: &str = "main";
/// What start at login runs: the app, in the tray only.
const HIDDEN_ARG: &str = "--hidden";

/// A display the window and tray can use (tao panics without one).
pub fn display_available() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Which page the window opens on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Dashboard,
    Setup,
    Settings,
    /// The dashboard, reloaded so its WeChat panel shows a login just started.
    Wechat,
    /// The Skills screen (proposals to review).
    Skills,
}

impl Screen {
    fn fragment(self) -> Option<&'static str> {
        match self {
            Screen::Dashboard => None,
            Screen::Setup => Some("setup"),
            Screen::Settings => Some("settings"),
            Screen::Wechat => Some("dashboard"),
            Screen::Skills => Some("skills"),
        }
    }
}

/// Runs the engine and the desktop shell until Quit, a signal or `metaclaw stop`. `hidden`
/// starts in the tray with no window; `wechat_relogin` runs the WeChat login at start.
pub fn run(paths: Paths, overrides: Overrides, hidden: bool, wechat_relogin: bool) -> Outcome {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    if let Err(e) = paths.ensure_dirs() {
        let problem = failure::Problem::no_home(&e.to_string(), &paths);
        return explain_and_exit(&runtime, &problem, hidden, Failure::error(e));
    }
    let listener = match single::claim(&paths) {
        Ok(single::Claim::First(listener)) => Some(listener),
        Ok(single::Claim::Shown) => {
            crate::output::line("MetaClaw is already running: showed its window.");
            if wechat_relogin {
                crate::output::line(
                    "To log in to WeChat again, use its tray menu's or dashboard's \"Log in to WeChat again\".",
                );
            }
            return Ok(());
        }
        // A home whose socket path is too long for Unix sockets, say: the engine's instance
        // lock still keeps a second MetaClaw out, it just cannot show the first one's window.
        Err(e) => {
            tracing::warn!("cannot listen for other launches: {e}");
            None
        }
    };
    let mut options = StartOptions {
        overrides,
        events: Events::new(),
        wechat_relogin,
        ..StartOptions::default()
    };
    let taken = match takeover::take_over(&paths) {
        Ok(taken) => taken,
        Err(f) => {
            let problem = failure::Problem::running_engine(&f.message);
            return explain_and_exit(&runtime, &problem, hidden, f);
        }
    };
    if let Some(TakenOver {
        port: Some(port), ..
    }) = taken
        && options.overrides.port.is_none()
    {
        options.overrides.port = Some(port);
    }
    let (host, engine) = loop {
        match runtime.block_on(Host::start(paths.clone(), &options)) {
            Ok(started) => break started,
            Err(e) => {
                tracing::error!("{e}");
                let problem = failure::Problem::of(&e, &paths);
                if hidden {
                    runtime.block_on(notify::tell(failure::TITLE, problem.note()));
                }
                match failure::ask(&problem) {
                    failure::Choice::UsePort(port) => {
                        use_port(&paths, &mut options, port)?;
                        tracing::info!(port, "starting on the port chosen in the dialog");
                    }
                    failure::Choice::Quit => return Err(Failure::error(e)),
                }
            }
        }
    };
    if let Some(t) = taken {
        let port = engine.addr().port();
        runtime.block_on(notify::tell(
            "MetaClaw moved into the tray",
            format!(
                "The MetaClaw started from a terminal (PID {}) was stopped; this app serves on port {port} now.",
                t.pid
            ),
        ));
    }
    let first_screen = if hidden {
        None
    } else if runtime.block_on(configured(paths)) {
        Some(Screen::Dashboard)
    } else {
        Some(Screen::Setup)
    };
    tauri::async_runtime::set(runtime.handle().clone());

    let setup_host = host.clone();
    let builder = tauri::Builder::default().plugin(tauri_plugin_autostart::init(
        tauri_plugin_autostart::MacosLauncher::LaunchAgent,
        Some(vec![HIDDEN_ARG]),
    ));
    #[cfg(any(target_os = "macos", target_os = "windows"))]
    let builder = match app_updater::plugin() {
        Some(updater) => builder.plugin(updater),
        None => builder,
    };
    let app = builder
        .setup(move |app| {
            let handle = app.handle().clone();
            tray::build(&handle, &setup_host)?;
            if let Some(screen) = first_screen {
                open_window(&handle, &setup_host, screen);
            }
            tray::follow(handle, setup_host.clone());
            Ok(())
        })
        .build(tauri::generate_context!())
        .map_err(|e| Failure::error(format!("cannot start the desktop app: {e}")))?;

    {
        let (handle, show_host) = (app.handle().clone(), host.clone());
        let _guard = runtime.enter();
        if let Some(listener) = listener {
            single::serve(listener, move || {
                open_window(&handle, &show_host, Screen::Dashboard);
            })?;
        }
        notify::follow(&host.events);
    }
    let result: Arc<Mutex<Option<Result<(), EngineError>>>> = Arc::new(Mutex::new(None));
    {
        let (handle, result, serving) = (app.handle().clone(), result.clone(), host.clone());
        runtime.spawn(async move {
            let done = serving.serve(engine, options).await;
            if let Err(e) = &done {
                tracing::error!("{e}");
                notify::stopped(e.to_string()).await;
            }
            let code = i32::from(done.is_err());
            if let Ok(mut slot) = result.lock() {
                *slot = Some(done);
            }
            serving.quit.cancel();
            handle.exit(code);
        });
    }
    {
        let quit = host.quit.clone();
        runtime.spawn(async move {
            crate::commands::start::wait_for_signal().await;
            tracing::info!("signal received; shutting down");
            quit.cancel();
        });
    }
    let quit = host.quit.clone();
    app.run_return(move |_app, event| {
        if let RunEvent::ExitRequested {
            code: None, api, ..
        } = event
        {
            // The last window closed: stay in the tray unless MetaClaw is stopping.
            if !quit.is_cancelled() {
                api.prevent_exit();
            }
        }
    });
    // The event loop can also end on its own (the display went away): stop the engine then.
    host.quit.cancel();
    let outcome = result.lock().ok().and_then(|mut r| r.take());
    match outcome {
        Some(Ok(())) if host.relaunching() => Err(relaunch::relaunch()),
        Some(Ok(())) => Ok(()),
        Some(Err(e)) => Err(Failure::error(e)),
        None => Err(Failure::error(
            "the desktop app ended before the engine stopped",
        )),
    }
}

/// A problem found before the engine could even be tried: told, then the app exits.
fn explain_and_exit(
    runtime: &tokio::runtime::Runtime,
    problem: &failure::Problem,
    hidden: bool,
    f: Failure,
) -> Outcome {
    if hidden {
        runtime.block_on(notify::tell(failure::TITLE, problem.note()));
    }
    failure::ask(problem);
    Err(f)
}

/// The port chosen in the dialog: this run listens there, and the config keeps it (unless
/// `--port` chose the busy one, which stays this run's own business).
fn use_port(paths: &Paths, options: &mut StartOptions, port: u16) -> Result<(), Failure> {
    if options.overrides.port.is_none() {
        let store = SecretStore::open(paths).map_err(Failure::error)?;
        metaclaw_engine::config::set(paths, "proxy.port", &port.to_string(), &store)
            .map_err(Failure::error)?;
    }
    options.overrides.port = Some(port);
    Ok(())
}

/// Whether setup has been done (a provider is configured); the first run opens setup.
async fn configured(paths: Paths) -> bool {
    let current = tokio::task::spawn_blocking(move || {
        let store = SecretStore::open(&paths).map_err(|e| e.to_string())?;
        metaclaw_engine::setup::current(&paths, &store).map_err(|e| e.to_string())
    })
    .await;
    match current {
        Ok(Ok(c)) => c.configured,
        Ok(Err(e)) => {
            tracing::warn!("cannot read the setup answers: {e}");
            false
        }
        Err(e) => {
            tracing::warn!("cannot read the setup answers: {e}");
            false
        }
    }
}

/// Shows the window on `screen`, creating it the first time.
pub(super) fn open_window(app: &AppHandle, host: &Host, screen: Screen) {
    let url = match host.url(screen.fragment()).parse::<tauri::Url>() {
        Ok(url) => url,
        Err(e) => {
            tracing::warn!("cannot open the window: {e}");
            return;
        }
    };
    if let Some(window) = app.get_webview_window(WINDOW_LABEL) {
        tracing::info!("showing the window on {screen:?}");
        if screen != Screen::Dashboard
            && let Err(e) = window.navigate(url)
        {
            tracing::warn!("cannot open {screen:?}: {e}");
        }
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
        return;
    }
    tracing::info!("opening the window on {screen:?}");
    let built = WebviewWindowBuilder::new(app, WINDOW_LABEL, WebviewUrl::External(url))
        .title("MetaClaw")
        .inner_size(1100.0, 760.0)
        .build();
    match built {
        Ok(window) => {
            let hide = window.clone();
            window.on_window_event(move |event| {
                if let WindowEvent::CloseRequested { api, .. } = event {
                    // Closing the window keeps MetaClaw in the tray.
                    api.prevent_close();
                    let _ = hide.hide();
                }
            });
        }
        Err(e) => tracing::warn!("cannot open the window: {e}"),
    }
}
