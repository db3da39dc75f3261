//! The tray icon and its menu: built from a [`View`], rebuilt when the view changes (the
//! scheduler moved, the engine restarted, an agent connected), and what each item does.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use metaclaw_engine::agents;
use metaclaw_engine::events::EngineEvent;
use metaclaw_engine::schedule::view::Extra;
use metaclaw_engine::schedule::{SchedulerStatus, parse};
use metaclaw_engine::wechat::State as WechatState;
use metaclaw_schedule::machine::Snapshot;
use tauri::image::Image;
use tauri::menu::{
    CheckMenuItem, IsMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem, Submenu,
};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager, Wry};
use tauri_plugin_autostart::ManagerExt;
use tokio::sync::broadcast::error::RecvError;

use super::host::{Host, Live};
use super::menu::{HostView, ItemId, TrayState, View};
use super::{Screen, open_window, train};
use crate::admin_client::AdminClient;

const TRAY_ID: &str = "main";
/// Agents connect and disconnect outside the app too (`metaclaw agent …`): look again this often.
const AGENTS_EVERY: Duration = Duration::from_secs(30);

pub fn build(app: &AppHandle, host: &Arc<Host>) -> tauri::Result<()> {
    let live = host.live();
    let view = view_of(
        &live,
        &live.windows.snapshot(),
        &host_view(app, &live, vec![], &host.paths.skills),
    );
    let (menu, items) = build_menu(app, &view)?;
    app.manage(Shown(Mutex::new(Some(items))));
    let on_menu = host.clone();
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(Image::from_bytes(view.state.icon_png())?)
        .tooltip(view.tooltip())
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(move |app, event: MenuEvent| on_menu_event(app, &on_menu, event))
        .build(app)?;
    Ok(())
}

/// The items whose text or check follows the view, kept to update them in place: a panel
/// keeps an open menu open through that, and rebuilds only when Pause and Resume swap.
struct LiveItems {
    paused: bool,
    status: MenuItem<Wry>,
    agent: MenuItem<Wry>,
    learning: MenuItem<Wry>,
    modes: Vec<(ItemId, CheckMenuItem<Wry>)>,
    login: CheckMenuItem<Wry>,
    /// The WeChat line, while the channel is on (its presence rebuilds the menu).
    wechat: Option<MenuItem<Wry>>,
    /// "Review N learned skills…", while proposals wait (its presence rebuilds the menu).
    review: Option<MenuItem<Wry>>,
    /// "Update available (N)…" or "Restart MetaClaw (N)" (its presence rebuilds the menu).
    update: Option<MenuItem<Wry>>,
}

impl LiveItems {
    fn update(&self, view: &View) -> tauri::Result<()> {
        self.status.set_text(&view.status)?;
        self.agent.set_text(&view.agent)?;
        self.learning.set_text(&view.learning)?;
        for (id, item) in &self.modes {
            item.set_checked(view.checked(*id))?;
        }
        if let (Some(item), Some(line)) = (&self.wechat, &view.wechat) {
            item.set_text(line)?;
        }
        if let (Some(item), Some(line)) = (&self.review, &view.review) {
            item.set_text(line)?;
        }
        if let (Some(item), Some(line)) = (&self.update, &view.update) {
            item.set_text(line)?;
        }
        self.login.set_checked(view.autostart)
    }
}

/// The menu's live items, in Tauri's managed state.
#[derive(Default)]
struct Shown(Mutex<Option<LiveItems>>);

fn build_menu(app: &AppHandle, view: &View) -> tauri::Result<(Menu<Wry>, LiveItems)> {
    let item = |id: ItemId, text: &str, enabled: bool| {
        MenuItem::with_id(app, id.as_str(), text, enabled, None::<&str>)
    };
    let status = item(ItemId::Status, &view.status, false)?;
    let agent = item(ItemId::Agent, &view.agent, false)?;
    let learning = item(ItemId::Learning, &view.learning, false)?;
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
        Box::new(submenu(app, ItemId::PauseMenu, &choices)?)
    };
    let train = item(ItemId::TrainNow, ItemId::TrainNow.label(), true)?;
    let modes = ItemId::MODES
        .into_iter()
        .map(|id| {
            CheckMenuItem::with_id(
                app,
                id.as_str(),
                id.label(),
                true,
                view.checked(id),
                None::<&str>,
            )
        })
        .collect::<tauri::Result<Vec<_>>>()?;
    let mode = submenu(app, ItemId::ModeMenu, &modes)?;
    let modes = ItemId::MODES.into_iter().zip(modes).collect();
    let open = item(ItemId::OpenDashboard, ItemId::OpenDashboard.label(), true)?;
    let settings = item(ItemId::Settings, ItemId::Settings.label(), true)?;
    let login = CheckMenuItem::with_id(
        app,
        ItemId::StartAtLogin.as_str(),
        ItemId::StartAtLogin.label(),
        true,
        view.autostart,
        None::<&str>,
    )?;
    let quit = item(ItemId::Quit, ItemId::Quit.label(), true)?;
    let wechat = match &view.wechat {
        Some(line) => Some((
            item(ItemId::Wechat, line, false)?,
            item(ItemId::WechatLogin, ItemId::WechatLogin.label(), true)?,
        )),
        None => None,
    };
    let review = match &view.review {
        Some(line) => Some(item(ItemId::Review, line, true)?),
        None => None,
    };
    let update = match &view.update {
        Some(line) => Some(item(ItemId::Update, line, true)?),
        None => None,
    };
    let separators = (0..3)
        .map(|_| PredefinedMenuItem::separator(app))
        .collect::<tauri::Result<Vec<_>>>()?;
    let [first, second, third] = separators.as_slice() else {
        return Err(anyhow::anyhow!("three separators were asked for").into());
    };
    let mut items: Vec<&dyn IsMenuItem<Wry>> = vec![&status, &agent, &learning];
    if let Some((line, relogin)) = &wechat {
        items.extend([line as &dyn IsMenuItem<Wry>, relogin]);
    }
    if let Some(review) = &review {
        items.push(review);
    }
    if let Some(update) = &update {
        items.push(update);
    }
    items.extend([
        first as &dyn IsMenuItem<Wry>,
        toggle.as_ref(),
        &train,
        &mode,
        second,
        &open,
        &settings,
        &login,
        third,
        &quit,
    ]);
    let menu = Menu::with_items(app, &items)?;
    let live = LiveItems {
        paused: view.paused,
        status,
        agent,
        learning,
        modes,
        login,
        wechat: wechat.map(|(line, _)| line),
        review,
        update,
    };
    Ok((menu, live))
}

fn submenu<M: IsMenuItem<Wry>>(
    app: &AppHandle,
    id: ItemId,
    items: &[M],
) -> tauri::Result<Submenu<Wry>> {
    let refs: Vec<&dyn IsMenuItem<Wry>> = items.iter().map(|c| c as &dyn IsMenuItem<Wry>).collect();
    Submenu::with_id_and_items(app, id.as_str(), id.label(), true, &refs)
}

/// The host's part of the view; counts the proposals waiting in `skills` (a folder listing).
fn host_view(app: &AppHandle, live: &Live, agents: Vec<String>, skills: &Path) -> HostView {
    HostView {
        agents,
        mode: live.mode,
        autostart: app.autolaunch().is_enabled().unwrap_or(false),
        wechat: wechat_line(live),
        proposals: metaclaw_skills::proposals::list(skills).len(),
        update: {
            let u = live.updates.status();
            super::menu::update_line(u.available.as_deref(), u.restart_to.as_deref())
        },
    }
}

/// The WeChat line while the channel is on for OpenClaw (enabled, installed or busy).
fn wechat_line(live: &Live) -> Option<String> {
    if !live.wechat.supported() {
        return None;
    }
    let (state, line) = live.wechat.summary();
    (state != WechatState::Off).then_some(line)
}

fn view_of(live: &Live, snapshot: &Snapshot, host: &HostView) -> View {
    let w = &live.windows;
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
    View::of(&status, &live.addr.to_string(), host)
}

/// The agents MetaClaw has connected (their configs point at it). Reads agent files.
async fn connected_agents(host: &Host) -> Vec<String> {
    let paths = host.paths.clone();
    tokio::task::spawn_blocking(move || {
        let env = agents::system_env().ok()?;
        Some(
            agents::statuses(&paths, &env)
                .into_iter()
                .filter(|s| s.connected)
                .map(|s| s.agent)
                .collect(),
        )
    })
    .await
    .ok()
    .flatten()
    .unwrap_or_default()
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
    let shown = app.state::<Shown>();
    let mut shown = shown
        .0
        .lock()
        .map_err(|_| anyhow::anyhow!("the tray menu's state is poisoned"))?;
    match shown.as_ref() {
        Some(items)
            if items.paused == view.paused
                && items.wechat.is_some() == view.wechat.is_some()
                && items.review.is_some() == view.review.is_some()
                && items.update.is_some() == view.update.is_some() =>
        {
            items.update(view)?
        }
        _ => {
            let (menu, items) = build_menu(app, view)?;
            tray.set_menu(Some(menu))?;
            *shown = Some(items);
        }
    }
    tray.set_icon(Some(Image::from_bytes(view.state.icon_png())?))?;
    tray.set_tooltip(Some(view.tooltip()))?;
    Ok(())
}

/// Keeps the tray in step with the current engine's scheduler (its watch channel), the
/// engine itself (a restart brings a new scheduler and maybe a new mode) and the agents,
/// until Quit.
pub fn follow(app: AppHandle, host: Arc<Host>) {
    tauri::async_runtime::spawn(async move {
        let mut engines = host.watch();
        let mut agents_tick = tokio::time::interval(AGENTS_EVERY);
        let mut agents = connected_agents(&host).await;
        let mut shown: Option<View> = None;
        // WeChat progress comes as engine events (the bus outlives restarts).
        let mut events = host.events.subscribe();
        'engines: loop {
            let live = engines.borrow_and_update().clone();
            let mut scheduler = live.windows.watch();
            let mut scheduler_open = true;
            // Only WeChat's events change the tray; the others (one per turn) do not redraw it.
            let mut redraw = true;
            loop {
                if redraw {
                    let snapshot = scheduler.borrow_and_update().clone();
                    let view = view_of(
                        &live,
                        &snapshot,
                        &host_view(&app, &live, agents.clone(), &host.paths.skills),
                    );
                    if shown.as_ref() != Some(&view) {
                        apply(&app, &view);
                        shown = Some(view);
                    }
                }
                redraw = true;
                tokio::select! {
                    changed = scheduler.changed(), if scheduler_open => {
                        // The engine stopped; the next one comes through `engines`.
                        scheduler_open = changed.is_ok();
                    }
                    changed = engines.changed() => {
                        if changed.is_err() { break 'engines }
                        agents = connected_agents(&host).await;
                        continue 'engines;
                    }
                    _ = agents_tick.tick() => agents = connected_agents(&host).await,
                    event = events.recv() => match event {
                        Ok(
                            EngineEvent::Wechat { .. }
                            | EngineEvent::SkillProposed { .. }
                            | EngineEvent::SkillsLearned { .. }
                            | EngineEvent::UpdateAvailable { .. }
                            | EngineEvent::RestartOffered { .. },
                        )
                        | Err(RecvError::Lagged(_)) => {}
                        Ok(_) => redraw = false,
                        Err(RecvError::Closed) => break 'engines,
                    },
                    () = host.quit.cancelled() => break 'engines,
                }
            }
        }
    });
}

/// Redraws the tray now (after an item changed something the watches do not see).
fn redraw(app: &AppHandle, host: &Arc<Host>) {
    let (app, host) = (app.clone(), host.clone());
    tauri::async_runtime::spawn(async move {
        let live = host.live();
        let agents = connected_agents(&host).await;
        let view = view_of(
            &live,
            &live.windows.snapshot(),
            &host_view(&app, &live, agents, &host.paths.skills),
        );
        apply(&app, &view);
    });
}

fn on_menu_event(app: &AppHandle, host: &Arc<Host>, event: MenuEvent) {
    let Some(id) = ItemId::parse(event.id().as_ref()) else {
        return;
    };
    tracing::info!(item = id.as_str(), "tray menu");
    if let Some((duration, until)) = id.pause_request() {
        let windows = host.live().windows;
        tauri::async_runtime::spawn(async move {
            let end = match parse::pause_end(duration, until, windows.now(), &windows.time_zone()) {
                Ok(end) => end,
                Err(e) => {
                    tracing::warn!("cannot pause learning: {e}");
                    return;
                }
            };
            if let Err(e) = windows.pause(end).await {
                tracing::warn!("cannot pause learning: {e}");
            }
        });
        return;
    }
    if let Some(mode) = id.mode() {
        if mode == host.live().mode {
            // A check item toggles itself on click; put the check back.
            redraw(app, host);
            return;
        }
        let host = host.clone();
        tauri::async_runtime::spawn_blocking(move || match host.set_mode(mode) {
            Ok(()) => tracing::info!(%mode, "mode chosen in the tray; restarting"),
            Err(e) => tracing::warn!("cannot set the mode: {e}"),
        });
        return;
    }
    match id {
        ItemId::Resume => {
            let windows = host.live().windows;
            tauri::async_runtime::spawn(async move {
                if let Err(e) = windows.resume().await {
                    tracing::warn!("cannot resume learning: {e}");
                }
            });
        }
        ItemId::TrainNow => {
            let live = host.live();
            tauri::async_runtime::spawn(async move {
                match AdminClient::local(live.addr, &live.token) {
                    Ok(client) => {
                        for line in train::train_now(&client).await {
                            tracing::info!("train now: {line}");
                        }
                    }
                    Err(e) => tracing::warn!("cannot train now: {}", e.message),
                }
            });
        }
        ItemId::WechatLogin => {
            let live = host.live();
            let (app, host) = (app.clone(), host.clone());
            tauri::async_runtime::spawn(async move {
                let asked =
                    tokio::task::spawn_blocking(move || live.wechat.login(&live.tasks)).await;
                match asked {
                    Ok(Ok(_)) => tracing::info!("WeChat login started from the tray"),
                    Ok(Err(e)) => tracing::warn!("cannot log in to WeChat: {e}"),
                    Err(e) => tracing::warn!("cannot log in to WeChat: {e}"),
                }
                // The dashboard's WeChat panel shows the QR code, or why there is none.
                open_window(&app, &host, Screen::Wechat);
            });
        }
        ItemId::OpenDashboard => open_window(app, host, Screen::Dashboard),
        ItemId::Review => open_window(app, host, Screen::Skills),
        ItemId::Update => update_chosen(app, host),
        ItemId::Settings => open_window(app, host, Screen::Settings),
        ItemId::StartAtLogin => {
            let launcher = app.autolaunch();
            let result = if launcher.is_enabled().unwrap_or(false) {
                launcher.disable()
            } else {
                launcher.enable()
            };
            if let Err(e) = result {
                tracing::warn!("cannot change start at login: {e}");
            }
            redraw(app, host);
        }
        ItemId::Quit => {
            if let Some(tray) = app.tray_by_id(TRAY_ID)
                && let Ok(icon) = Image::from_bytes(TrayState::Stopped.icon_png())
            {
                let _ = tray.set_icon(Some(icon));
            }
            tracing::info!("Quit chosen in the tray; shutting down");
            host.quit.cancel();
        }
        _ => {}
    }
}

/// The update item: a restart once the new version is installed, else (on Linux) a
/// notification that says how to install the newer one: MetaClaw does not install there.
/// macOS and Windows builds with an update key install it themselves.
fn update_chosen(#[allow(unused_variables)] app: &AppHandle, host: &Arc<Host>) {
    let status = host.live().updates.status();
    if status.restart_to.is_some() {
        let host = host.clone();
        tauri::async_runtime::spawn(async move { host.restart_into_new_version().await });
        return;
    }
    let Some(version) = status.available else {
        return;
    };
    let apply = status.apply.unwrap_or_default();
    #[cfg(any(target_os = "macos", target_os = "windows"))]
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        #[cfg(any(target_os = "macos", target_os = "windows"))]
        if super::app_updater::built_in() {
            if let Err(e) = super::app_updater::install(app).await {
                tracing::warn!("cannot install the update: {e}");
            }
            return;
        }
        super::notify::tell(
            &format!("MetaClaw {version} is available"),
            format!("To install it: {apply}"),
        )
        .await;
    });
}
