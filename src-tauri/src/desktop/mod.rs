//! The desktop shell: the engine runs inside this process, with a tray icon (state, learning
//! line, Pause/Resume, Open dashboard, Quit) and a dashboard window that loads the engine's UI.
//! Closing the window keeps the app in the tray; Quit stops the engine the way `metaclaw stop`
//! does (its shutdown token) and exits once it has drained.

pub mod menu;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use metaclaw_engine::config::Overrides;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::run::{Engine, EngineError, StartOptions};
use metaclaw_engine::schedule::view::Extra;
use metaclaw_engine::schedule::{SchedulerStatus, Windows, parse};
use metaclaw_schedule::machine::Snapshot;
use tauri::image::Image;
use tauri::menu::{IsMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager, RunEvent, WebviewUrl, WebviewWindowBuilder, WindowEvent, Wry};
use tokio_util::sync::CancellationToken;

use crate::exit::{Failure, Outcome};
use menu::{ItemId, TrayState, View};

const TRAY_ID: &str = "main";
const WINDOW_LABEL: &str = "main";

/// A display the window and tray can use (tao panics without one).
pub fn display_available() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

struct Shell {
    windows: Windows,
    shutdown: CancellationToken,
    addr: SocketAddr,
    url: String,
}

/// Runs the engine and the desktop shell until Quit, a signal or `metaclaw stop`.
pub fn run(paths: Paths, overrides: Overrides) -> Outcome {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // One instance at a time: the engine's instance lock refuses a second one here, before
    // any window opens.
    let engine = runtime
        .block_on(Engine::start(
            paths,
            StartOptions {
                overrides,
                ..StartOptions::default()
            },
        ))
        .map_err(Failure::error)?;
    tauri::async_runtime::set(runtime.handle().clone());
    let addr = engine.addr();
    let shell = Arc::new(Shell {
        windows: engine.scheduler(),
        shutdown: engine.shutdown_token(),
        addr,
        url: format!("http://{addr}/ui/#token={}", engine.admin_token()),
    });

    let setup_shell = shell.clone();
    let app = tauri::Builder::default()
        .setup(move |app| {
            let handle = app.handle().clone();
            build_tray(&handle, &setup_shell)?;
            open_dashboard(&handle, &setup_shell);
            follow_scheduler(handle, setup_shell.clone());
            Ok(())
        })
        .build(tauri::generate_context!())
        .map_err(|e| Failure::error(format!("cannot start the desktop app: {e}")))?;

    let result: Arc<Mutex<Option<Result<(), EngineError>>>> = Arc::new(Mutex::new(None));
    {
        let (handle, result) = (app.handle().clone(), result.clone());
        runtime.spawn(async move {
            let done = engine.wait().await.map(|_| ());
            let code = i32::from(done.is_err());
            if let Ok(mut slot) = result.lock() {
                *slot = Some(done);
            }
            handle.exit(code);
        });
    }
    {
        let token = shell.shutdown.clone();
        runtime.spawn(async move {
            crate::commands::start::wait_for_signal().await;
            tracing::info!("signal received; shutting down");
            token.cancel();
        });
    }
    let shutdown = shell.shutdown.clone();
    app.run_return(move |_app, event| {
        if let RunEvent::ExitRequested {
            code: None, api, ..
        } = event
        {
            // The last window closed: stay in the tray unless the engine is stopping.
            if !shutdown.is_cancelled() {
                api.prevent_exit();
            }
        }
    });
    // The event loop can also end on its own (the display went away): stop the engine then.
    shell.shutdown.cancel();
    let outcome = result.lock().ok().and_then(|mut r| r.take());
    match outcome {
        Some(Ok(())) => Ok(()),
        Some(Err(e)) => Err(Failure::error(e)),
        None => Err(Failure::error(
            "the desktop app ended before the engine stopped",
        )),
    }
}

fn build_tray(app: &AppHandle, shell: &Arc<Shell>) -> tauri::Result<()> {
    let view = current_view(shell);
    let menu = build_menu(app, &view)?;
    let on_menu = shell.clone();
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(Image::from_bytes(view.state.icon_png())?)
        .tooltip(view.tooltip())
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(move |app, event: MenuEvent| on_menu_event(app, &on_menu, event))
        .build(app)?;
    Ok(())
}

fn build_menu(app: &AppHandle, view: &View) -> tauri::Result<Menu<Wry>> {
    let item = |id: ItemId, text: &str, enabled: bool| {
        MenuItem::with_id(app, id.as_str(), text, enabled, None::<&str>)
    };
    let status = item(ItemId::Status, &view.status, false)?;
    let learning = item(ItemId::Learning, &view.learning, false)?;
    let open = item(ItemId::OpenDashboard, ItemId::OpenDashboard.label(), true)?;
    let quit = item(ItemId::Quit, ItemId::Quit.label(), true)?;
    let first = PredefinedMenuItem::separator(app)?;
    let second = PredefinedMenuItem::separator(app)?;
    let toggle: Box<dyn IsMenuItem<Wry>> = if view.paused {
        Box::new(item(ItemId::Resume, ItemId::Resume.label(), true)?)
    } else {
        let choices = [
            ItemId::Pause30Min,
            ItemId::Pause1Hour,
            ItemId::Pause2Hours,
            ItemId::PauseTomorrow,
            ItemId::PauseUntilResumed,
        ]
        .into_iter()
        .map(|id| item(id, id.label(), true))
        .collect::<tauri::Result<Vec<_>>>()?;
        let refs: Vec<&dyn IsMenuItem<Wry>> =
            choices.iter().map(|c| c as &dyn IsMenuItem<Wry>).collect();
        Box::new(Submenu::with_id_and_items(
            app,
            ItemId::PauseMenu.as_str(),
            ItemId::PauseMenu.label(),
            true,
            &refs,
        )?)
    };
    Menu::with_items(
        app,
        &[
            &status,
            &learning,
            &first,
            toggle.as_ref(),
            &second,
            &open,
            &quit,
        ],
    )
}

fn current_view(shell: &Shell) -> View {
    view_of(shell, &shell.windows.snapshot())
}

fn view_of(shell: &Shell, snapshot: &Snapshot) -> View {
    let w = &shell.windows;
    let status = SchedulerStatus::new(
        snapshot,
        Extra {
            info: w.info(),
            pause_problem: w.pause_problem(),
            gate: true,
            running: true,
            tz: w.time_zone(),
        },
    );
    View::of(&status, &shell.addr.to_string())
}

fn apply(app: &AppHandle, view: &View) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    if let Err(e) = set_tray(app, &tray, view) {
        tracing::warn!("cannot update the tray: {e}");
    }
}

fn set_tray(app: &AppHandle, tray: &TrayIcon<Wry>, view: &View) -> tauri::Result<()> {
    tray.set_menu(Some(build_menu(app, view)?))?;
    tray.set_icon(Some(Image::from_bytes(view.state.icon_png())?))?;
    tray.set_tooltip(Some(view.tooltip()))?;
    Ok(())
}

/// Keeps the tray in step with the scheduler (its watch channel) until shutdown.
fn follow_scheduler(app: AppHandle, shell: Arc<Shell>) {
    tauri::async_runtime::spawn(async move {
        let mut rx = shell.windows.watch();
        let mut shown = current_view(&shell);
        loop {
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { break },
                _ = shell.shutdown.cancelled() => break,
            }
            let snapshot = rx.borrow_and_update().clone();
            let view = view_of(&shell, &snapshot);
            if view != shown {
                apply(&app, &view);
                shown = view;
            }
        }
    });
}

fn on_menu_event(app: &AppHandle, shell: &Arc<Shell>, event: MenuEvent) {
    let Some(id) = ItemId::parse(event.id().as_ref()) else {
        return;
    };
    tracing::info!(item = id.as_str(), "tray menu");
    if let Some((duration, until)) = id.pause_request() {
        let shell = shell.clone();
        tauri::async_runtime::spawn(async move {
            let end = match parse::pause_end(
                duration,
                until,
                shell.windows.now(),
                &shell.windows.time_zone(),
            ) {
                Ok(end) => end,
                Err(e) => {
                    tracing::warn!("cannot pause learning: {e}");
                    return;
                }
            };
            if let Err(e) = shell.windows.pause(end).await {
                tracing::warn!("cannot pause learning: {e}");
            }
        });
        return;
    }
    match id {
        ItemId::Resume => {
            let shell = shell.clone();
            tauri::async_runtime::spawn(async move {
                if let Err(e) = shell.windows.resume().await {
                    tracing::warn!("cannot resume learning: {e}");
                }
            });
        }
        ItemId::OpenDashboard => open_dashboard(app, shell),
        ItemId::Quit => {
            if let Some(tray) = app.tray_by_id(TRAY_ID)
                && let Ok(icon) = Image::from_bytes(TrayState::Stopped.icon_png())
            {
                let _ = tray.set_icon(Some(icon));
            }
            tracing::info!("Quit chosen in the tray; shutting down");
            shell.shutdown.cancel();
        }
        _ => {}
    }
}

/// Shows the dashboard window, creating it the first time.
fn open_dashboard(app: &AppHandle, shell: &Shell) {
    if let Some(window) = app.get_webview_window(WINDOW_LABEL) {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
        return;
    }
    let url = match shell.url.parse() {
        Ok(url) => url,
        Err(e) => {
            tracing::warn!("cannot open the dashboard: {e}");
            return;
        }
    };
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
        Err(e) => tracing::warn!("cannot open the dashboard window: {e}"),
    }
}
