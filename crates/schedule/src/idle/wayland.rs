//! Keyboard/mouse idle from a Wayland compositor through the `ext-idle-notify-v1` protocol
//! (wlroots compositors such as Sway and Hyprland, KWin): MetaClaw asks to be told when the
//! seat has been idle for the threshold, and when it is used again. A thread blocks on the
//! compositor's socket and wakes only for those two events; a reading is a look at what it
//! last heard, never a round trip.

use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use wayland_client::globals::{BindError, GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_registry, wl_seat};
use wayland_client::{Connection, Dispatch, QueueHandle};
use wayland_protocols::ext::idle_notify::v1::client::{
    ext_idle_notification_v1, ext_idle_notifier_v1,
};

use super::IdleProbe;
use super::bounded;

pub const NAME: &str = "ext-idle-notify";

/// What the watching thread last heard.
#[derive(Debug, Default)]
struct Heard {
    /// When the compositor said the threshold had passed without input (`None`: in use).
    idle_at: Option<Instant>,
    /// Why the compositor can no longer be heard.
    lost: Option<String>,
}

/// Idle from the compositor's idle notifications.
pub struct WaylandIdle {
    heard: Arc<Mutex<Heard>>,
    threshold: Duration,
    /// Shut down on drop, which ends the watching thread's blocking read.
    socket: Option<UnixStream>,
}

impl std::fmt::Debug for WaylandIdle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaylandIdle")
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

struct Watch {
    heard: Arc<Mutex<Heard>>,
}

impl Watch {
    fn set(&self, idle_at: Option<Instant>) {
        self.heard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .idle_at = idle_at;
    }
}

impl WaylandIdle {
    /// Connects to the compositor `$WAYLAND_DISPLAY` names and asks to hear when the seat
    /// has been idle for `threshold`; why not, when it cannot.
    pub fn connect(threshold: Duration) -> Result<WaylandIdle, String> {
        let busy = Arc::new(AtomicBool::new(false));
        let heard = Arc::new(Mutex::new(Heard::default()));
        let shared = Arc::clone(&heard);
        bounded::run("wayland-connect", &busy, move || watch(threshold, shared)).map(|socket| {
            WaylandIdle {
                heard,
                threshold,
                socket: Some(socket),
            }
        })
    }
}

/// Sets up the notification and starts the watching thread; the socket is returned to be
/// shut down when the probe goes.
fn watch(threshold: Duration, heard: Arc<Mutex<Heard>>) -> Result<UnixStream, String> {
    let conn = Connection::connect_to_env()
        .map_err(|e| format!("no Wayland compositor to connect to: {e}"))?;
    let (globals, mut queue) = registry_queue_init::<Watch>(&conn)
        .map_err(|e| format!("the compositor's globals: {e}"))?;
    let qh = queue.handle();
    let seat: wl_seat::WlSeat = globals
        .bind(&qh, 1..=1, ())
        .map_err(|e| format!("the compositor has no seat: {e}"))?;
    let notifier: ext_idle_notifier_v1::ExtIdleNotifierV1 =
        globals.bind(&qh, 1..=1, ()).map_err(|e| match e {
            BindError::NotPresent => "the compositor does not offer ext-idle-notify-v1".to_owned(),
            other => format!("ext-idle-notify-v1: {other}"),
        })?;
    let ms = u32::try_from(threshold.as_millis()).unwrap_or(u32::MAX);
    let _notification = notifier.get_idle_notification(ms, &seat, &qh, ());
    let mut state = Watch { heard };
    queue
        .roundtrip(&mut state)
        .map_err(|e| format!("the compositor refused the idle notification: {e}"))?;
    let socket = conn
        .as_fd()
        .try_clone_to_owned()
        .map(UnixStream::from)
        .map_err(|e| format!("the compositor's socket: {e}"))?;
    std::thread::Builder::new()
        .name("wayland-idle".to_owned())
        .spawn(move || {
            // Keeps the objects alive as long as the watch.
            let _objects = (seat, notifier, _notification, conn);
            let lost = loop {
                if let Err(e) = queue.blocking_dispatch(&mut state) {
                    break e.to_string();
                }
            };
            let mut heard = state.heard.lock().unwrap_or_else(PoisonError::into_inner);
            heard.lost = Some(format!("the compositor connection ended: {lost}"));
        })
        .map_err(|e| format!("cannot start the Wayland idle watch: {e}"))?;
    Ok(socket)
}

impl IdleProbe for WaylandIdle {
    /// The threshold plus the time since the compositor said it passed; zero (below the
    /// threshold, by how much is not said) while the seat is in use.
    fn idle_for(&self) -> Result<Duration, String> {
        let heard = self.heard.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lost) = &heard.lost {
            return Err(lost.clone());
        }
        Ok(heard
            .idle_at
            .map_or(Duration::ZERO, |at| self.threshold + at.elapsed()))
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn paced(&self) -> bool {
        // A reading costs nothing, and a zero reading says nothing about when the threshold
        // will pass: every tick looks.
        false
    }
}

impl Drop for WaylandIdle {
    fn drop(&mut self) {
        if let Some(socket) = self.socket.take() {
            // Ends the watching thread's read; the connection is gone with it.
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for Watch {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<wl_seat::WlSeat, ()> for Watch {
    fn event(
        _: &mut Self,
        _: &wl_seat::WlSeat,
        _: wl_seat::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<ext_idle_notifier_v1::ExtIdleNotifierV1, ()> for Watch {
    fn event(
        _: &mut Self,
        _: &ext_idle_notifier_v1::ExtIdleNotifierV1,
        _: ext_idle_notifier_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<ext_idle_notification_v1::ExtIdleNotificationV1, ()> for Watch {
    fn event(
        state: &mut Self,
        _: &ext_idle_notification_v1::ExtIdleNotificationV1,
        event: ext_idle_notification_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            ext_idle_notification_v1::Event::Idled => state.set(Some(Instant::now())),
            ext_idle_notification_v1::Event::Resumed => state.set(None),
            _ => {}
        }
    }
}
