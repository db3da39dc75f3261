//! Keyboard idle from the desktop, through the binary: GNOME's compositor run headless in a
//! Wayland session (Debian's `mutter`, input injected through its remote-desktop API), a
//! stand-in compositor offering ext-idle-notify-v1 (as Sway, Hyprland and KWin do; none in
//! Debian 12 does), and stand-ins for the freedesktop screen saver and logind on private
//! buses. Each test waits
//! for the training window to open after the idle threshold, injects input, sees the window
//! close, and sees it open again no sooner than a threshold later.
//!
//! mutter and dbus-daemon are required (`scripts/deps.sh --tests` installs them): these tests fail,
//! not skip, without them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::bus::{Killed, start_bus};
use common::daemon::{Home, free_port};
use serde_json::Value;

/// What MetaClaw is told the idle threshold is.
const THRESHOLD: Duration = Duration::from_secs(4);
/// Generous: a loaded machine starts mutter and the daemon slowly.
const DEADLINE: Duration = Duration::from_secs(60);
/// Poll interval while waiting for a state the daemon reports.
const POLL: Duration = Duration::from_millis(100);
/// Nothing listens here: a bus that is not there.
const NO_BUS: &str = "unix:path=/nonexistent/metaclaw-test-bus";

/// MetaClaw's daemon with the given environment, its training window read through the API.
struct Metaclaw {
    home: Home,
    base: String,
    http: reqwest::Client,
}

impl Metaclaw {
    async fn start(env: &[(&str, &str)]) -> Metaclaw {
        let port = free_port();
        // Sleep hours six hours away, whatever the time: only idle opens a window here.
        let hour = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            / 3600
            % 24;
        let (start, end) = ((hour + 6) % 24, (hour + 7) % 24);
        let home = Home::new(&format!(
            "proxy:\n  port: {port}\nscheduler:\n  sleep_start: \"{start:02}:00\"\n  sleep_end: \"{end:02}:00\"\n"
        ));
        let mut cmd = home.cmd("file", &["start", "--daemon"]);
        cmd.env("TZ", "UTC")
            .env(
                "METACLAW_IDLE_THRESHOLD_MS",
                THRESHOLD.as_millis().to_string(),
            )
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("XDG_SESSION_TYPE")
            .env_remove("METACLAW_IDLE_SOURCE")
            .env("DBUS_SESSION_BUS_ADDRESS", NO_BUS)
            .env("DBUS_SYSTEM_BUS_ADDRESS", NO_BUS);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let o = tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        Metaclaw {
            home,
            base: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
        }
    }

    async fn scheduler(&self) -> Value {
        self.http
            .get(format!("{}/api/scheduler", self.base))
            .bearer_auth(self.home.admin_token())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The idle source's reading: "open", "closed" or "unavailable".
    async fn idle(&self) -> (String, Value) {
        let s = self.scheduler().await;
        let reading = s["readings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["reason"] == "idle")
            .map(|r| r["state"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default();
        (reading, s)
    }

    async fn wait_idle(&self, want: &str) -> Value {
        let end = Instant::now() + DEADLINE;
        loop {
            let (reading, s) = self.idle().await;
            if reading == want {
                return s;
            }
            assert!(Instant::now() < end, "idle never read {want:?}: {s}");
            tokio::time::sleep(POLL).await;
        }
    }

    /// The window opens on idle, input closes it, and it opens again no sooner than a
    /// threshold after the input.
    async fn open_close_open(&self, input: impl AsyncFnOnce()) {
        let s = self.wait_idle("open").await;
        let end = Instant::now() + DEADLINE;
        let mut s = s;
        while s["state"] != "open" {
            assert!(Instant::now() < end, "the window did not open on idle: {s}");
            tokio::time::sleep(POLL).await;
            s = self.scheduler().await;
        }
        assert_eq!(s["reasons"], serde_json::json!(["idle"]), "{s}");
        input().await;
        let touched = Instant::now();
        let s = self.wait_idle("closed").await;
        assert_eq!(s["state"], "waiting", "input closes the window: {s}");
        self.wait_idle("open").await;
        assert!(
            touched.elapsed() >= THRESHOLD,
            "the window opened again {:?} after input, before the threshold",
            touched.elapsed()
        );
    }
}

/// GNOME's compositor, headless, in its own Wayland session on a private bus.
struct Mutter {
    _bus: Killed,
    bus: String,
    _mutter: Killed,
    runtime: tempfile::TempDir,
}

impl Mutter {
    async fn start() -> Mutter {
        let (bus_daemon, bus) = start_bus();
        let runtime = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            runtime.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let mutter = Command::new("mutter")
            .args(["--headless", "--wayland", "--no-x11"])
            .args(["--virtual-monitor", "640x480"])
            .env("DBUS_SESSION_BUS_ADDRESS", &bus)
            .env("XDG_RUNTIME_DIR", runtime.path())
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(runtime.path().join("mutter.log")).unwrap())
            .spawn()
            .expect("mutter is required (scripts/deps.sh --tests installs it)");
        let m = Mutter {
            _bus: bus_daemon,
            bus,
            _mutter: Killed(mutter),
            runtime,
        };
        // Up once the idle monitor answers on the bus.
        let conn = zbus::connection::Builder::address(m.bus.as_str())
            .unwrap()
            .build()
            .await
            .unwrap();
        let end = Instant::now() + DEADLINE;
        while idle_time(&conn).await.is_err() {
            let log = std::fs::read_to_string(m.runtime.path().join("mutter.log"));
            assert!(
                Instant::now() < end,
                "mutter's idle monitor never answered: {log:?}"
            );
            tokio::time::sleep(POLL).await;
        }
        m
    }

    fn wayland_display(&self) -> String {
        assert!(Path::new(&self.runtime.path().join("wayland-0")).exists());
        "wayland-0".to_owned()
    }
}

async fn idle_time(conn: &zbus::Connection) -> zbus::Result<u64> {
    let reply = conn
        .call_method(
            Some("org.gnome.Mutter.IdleMonitor"),
            "/org/gnome/Mutter/IdleMonitor/Core",
            Some("org.gnome.Mutter.IdleMonitor"),
            "GetIdletime",
            &(),
        )
        .await?;
    reply.body().deserialize()
}

/// Keyboard and pointer input through the compositor's remote-desktop API, as a remote
/// desktop client sends it. The session lives as long as this connection.
struct Input {
    conn: zbus::Connection,
    session: zbus::zvariant::OwnedObjectPath,
}

impl Input {
    async fn new(bus: &str) -> Input {
        let conn = zbus::connection::Builder::address(bus)
            .unwrap()
            .build()
            .await
            .unwrap();
        let reply = conn
            .call_method(
                Some("org.gnome.Mutter.RemoteDesktop"),
                "/org/gnome/Mutter/RemoteDesktop",
                Some("org.gnome.Mutter.RemoteDesktop"),
                "CreateSession",
                &(),
            )
            .await
            .unwrap();
        let session: zbus::zvariant::OwnedObjectPath = reply.body().deserialize().unwrap();
        let input = Input { conn, session };
        input.call("Start", &()).await;
        input
    }

    async fn call<B>(&self, method: &str, body: &B)
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        self.conn
            .call_method(
                Some("org.gnome.Mutter.RemoteDesktop"),
                self.session.as_str(),
                Some("org.gnome.Mutter.RemoteDesktop.Session"),
                method,
                body,
            )
            .await
            .unwrap_or_else(|e| panic!("RemoteDesktop {method}: {e}"));
    }

    /// A key press and release (the A key) and a small pointer move.
    async fn type_and_move(&self) {
        self.call("NotifyKeyboardKeycode", &(30u32, true)).await;
        self.call("NotifyKeyboardKeycode", &(30u32, false)).await;
        self.call("NotifyPointerMotionRelative", &(3.0f64, 2.0f64))
            .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn in_a_gnome_wayland_session_idle_comes_from_the_compositor() {
    let mutter = Mutter::start().await;
    let runtime = mutter.runtime.path().to_str().unwrap().to_owned();
    let display = mutter.wayland_display();
    let mc = Metaclaw::start(&[
        ("DBUS_SESSION_BUS_ADDRESS", &mutter.bus),
        ("XDG_RUNTIME_DIR", &runtime),
        ("WAYLAND_DISPLAY", &display),
        ("XDG_SESSION_TYPE", "wayland"),
    ])
    .await;
    let s = mc.scheduler().await;
    assert_eq!(s["sources"]["idle_probe"], "gnome-idle-monitor", "{s}");
    assert_eq!(
        s["sources"]["idle_passed_over"],
        serde_json::json!([]),
        "{s}"
    );
    assert_eq!(
        s["text"]["idle"], "keyboard idle from GNOME's idle monitor",
        "{s}"
    );
    let status = mc.home.run(&["scheduler", "status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("idle source:  keyboard idle from GNOME's idle monitor"),
        "{text}"
    );

    // Idle grows while nothing happens (the compositor's own count).
    let conn = zbus::connection::Builder::address(mutter.bus.as_str())
        .unwrap()
        .build()
        .await
        .unwrap();
    let first = idle_time(&conn).await.unwrap();
    let input = Input::new(&mutter.bus).await;
    mc.open_close_open(async || {
        let before = idle_time(&conn).await.unwrap();
        assert!(before >= first, "{before} < {first}");
        input.type_and_move().await;
        let after = idle_time(&conn).await.unwrap();
        assert!(
            after < before,
            "input did not reset the compositor's idle time"
        );
    })
    .await;
}

/// When the stand-in's user last touched the keyboard.
#[derive(Clone)]
struct LastInput(Arc<Mutex<Instant>>);

impl LastInput {
    fn now() -> LastInput {
        LastInput(Arc::new(Mutex::new(Instant::now())))
    }
    fn touch(&self) {
        *self.0.lock().unwrap() = Instant::now();
    }
    fn idle(&self) -> Duration {
        self.0.lock().unwrap().elapsed()
    }
}

/// The freedesktop screen saver as KDE serves it: milliseconds idle.
struct ScreenSaver(LastInput);

#[zbus::interface(name = "org.freedesktop.ScreenSaver")]
impl ScreenSaver {
    fn get_session_idle_time(&self) -> u32 {
        u32::try_from(self.0.idle().as_millis()).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_freedesktop_screen_saver_is_read_where_gnome_is_not() {
    let (_bus, bus) = start_bus();
    let user = LastInput::now();
    let _service = zbus::connection::Builder::address(bus.as_str())
        .unwrap()
        .name("org.freedesktop.ScreenSaver")
        .unwrap()
        .serve_at("/org/freedesktop/ScreenSaver", ScreenSaver(user.clone()))
        .unwrap()
        .build()
        .await
        .unwrap();
    let mc = Metaclaw::start(&[
        ("DBUS_SESSION_BUS_ADDRESS", &bus),
        ("WAYLAND_DISPLAY", "wayland-9"),
    ])
    .await;
    let s = mc.scheduler().await;
    assert_eq!(s["sources"]["idle_probe"], "freedesktop-screensaver", "{s}");
    let passed = s["sources"]["idle_passed_over"].as_array().unwrap();
    assert_eq!(passed.len(), 1, "{s}");
    assert!(
        passed[0]
            .as_str()
            .unwrap()
            .starts_with("gnome-idle-monitor: org.gnome.Mutter.IdleMonitor GetIdletime: org.freedesktop.DBus.Error.ServiceUnknown"),
        "{s}"
    );
    mc.open_close_open(async || user.touch()).await;
}

/// logind's session object, as much of it as idle needs.
struct Session {
    user: LastInput,
    /// The desktop's own idle delay before it sets the hint.
    delay: Duration,
}

#[zbus::interface(name = "org.freedesktop.login1.Session")]
impl Session {
    #[zbus(property)]
    fn idle_hint(&self) -> bool {
        self.user.idle() >= self.delay
    }

    /// Wall-clock microseconds when the session went idle.
    #[zbus(property)]
    fn idle_since_hint(&self) -> u64 {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        u64::try_from((now - self.user.idle()).as_micros()).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn logind_idle_hint_is_read_where_no_desktop_service_answers() {
    let (_session_bus, session_bus) = start_bus();
    let (_system_bus, system_bus) = start_bus();
    let user = LastInput::now();
    let _logind = zbus::connection::Builder::address(system_bus.as_str())
        .unwrap()
        .name("org.freedesktop.login1")
        .unwrap()
        .serve_at(
            "/org/freedesktop/login1/session/auto",
            Session {
                user: user.clone(),
                delay: Duration::from_secs(1),
            },
        )
        .unwrap()
        .build()
        .await
        .unwrap();
    let mc = Metaclaw::start(&[
        ("DBUS_SESSION_BUS_ADDRESS", &session_bus),
        ("DBUS_SYSTEM_BUS_ADDRESS", &system_bus),
    ])
    .await;
    let s = mc.scheduler().await;
    assert_eq!(s["sources"]["idle_probe"], "logind", "{s}");
    let passed: Vec<&str> = s["sources"]["idle_passed_over"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(passed.len(), 4, "{s}");
    assert!(passed[0].starts_with("gnome-idle-monitor: "), "{s}");
    assert!(passed[1].starts_with("freedesktop-screensaver: "), "{s}");
    assert!(
        passed[2].starts_with("ext-idle-notify: no Wayland compositor to connect to"),
        "{s}"
    );
    assert_eq!(passed[3], "x11: $DISPLAY is not set", "{s}");
    mc.open_close_open(async || user.touch()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_any_desktop_the_last_request_stands_in_and_says_why() {
    let mc = Metaclaw::start(&[]).await;
    let s = mc.scheduler().await;
    assert_eq!(s["sources"]["idle_probe"], "last-request", "{s}");
    let passed = s["sources"]["idle_passed_over"].as_array().unwrap();
    assert_eq!(passed.len(), 5, "{s}");
    assert!(
        passed[4]
            .as_str()
            .unwrap()
            .starts_with("logind: no system bus"),
        "{s}"
    );
    assert!(
        s["text"]["idle"]
            .as_str()
            .unwrap()
            .starts_with("no desktop reports keyboard idle here"),
        "{s}"
    );
}

/// A stand-in Wayland compositor with a seat and `ext_idle_notifier_v1`, behaving as wlroots
/// does: a notification says `idled` once its timeout passes without input, `resumed` at the
/// next input.
mod compositor {
    use std::os::unix::net::UnixStream;
    use std::path::PathBuf;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use wayland_protocols::ext::idle_notify::v1::server::{
        ext_idle_notification_v1, ext_idle_notifier_v1,
    };
    use wayland_server::backend::ClientData;
    use wayland_server::protocol::wl_seat;
    use wayland_server::{
        Client, DataInit, Dispatch, Display, DisplayHandle, GlobalDispatch, ListeningSocket, New,
    };

    use super::LastInput;

    /// How often the stand-in looks at its socket and its user: a test's event loop.
    const LOOP: Duration = Duration::from_millis(5);

    struct State {
        user: LastInput,
        /// Each notification, its timeout, and whether it said `idled` last.
        notifications: Vec<(
            ext_idle_notification_v1::ExtIdleNotificationV1,
            Duration,
            bool,
        )>,
    }

    struct NoData;
    impl ClientData for NoData {}

    pub struct Compositor {
        pub socket: PathBuf,
        stop: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    impl Drop for Compositor {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    impl Compositor {
        pub fn start(dir: &std::path::Path, user: LastInput) -> Compositor {
            let socket = dir.join("wayland-idle-test");
            let listening = ListeningSocket::bind_absolute(socket.clone()).unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let stopping = Arc::clone(&stop);
            let thread = std::thread::spawn(move || {
                let mut display = Display::<State>::new().unwrap();
                let dh = display.handle();
                dh.create_global::<State, wl_seat::WlSeat, ()>(1, ());
                dh.create_global::<State, ext_idle_notifier_v1::ExtIdleNotifierV1, ()>(1, ());
                let mut state = State {
                    user,
                    notifications: Vec::new(),
                };
                while !stopping.load(Ordering::Relaxed) {
                    if let Some(stream) = listening.accept().unwrap() {
                        insert(&mut display.handle(), stream);
                    }
                    display.dispatch_clients(&mut state).unwrap();
                    let idle = state.user.idle();
                    for (n, timeout, said_idle) in &mut state.notifications {
                        if !*said_idle && idle >= *timeout {
                            n.idled();
                            *said_idle = true;
                        } else if *said_idle && idle < *timeout {
                            n.resumed();
                            *said_idle = false;
                        }
                    }
                    let _ = display.flush_clients();
                    std::thread::sleep(LOOP);
                }
            });
            Compositor {
                socket,
                stop,
                thread: Some(thread),
            }
        }
    }

    fn insert(dh: &mut DisplayHandle, stream: UnixStream) {
        dh.insert_client(stream, Arc::new(NoData)).unwrap();
    }

    impl GlobalDispatch<wl_seat::WlSeat, ()> for State {
        fn bind(
            _: &mut Self,
            _: &DisplayHandle,
            _: &Client,
            resource: New<wl_seat::WlSeat>,
            _: &(),
            init: &mut DataInit<'_, Self>,
        ) {
            init.init(resource, ());
        }
    }

    impl Dispatch<wl_seat::WlSeat, ()> for State {
        fn request(
            _: &mut Self,
            _: &Client,
            _: &wl_seat::WlSeat,
            _: wl_seat::Request,
            _: &(),
            _: &DisplayHandle,
            _: &mut DataInit<'_, Self>,
        ) {
        }
    }

    impl GlobalDispatch<ext_idle_notifier_v1::ExtIdleNotifierV1, ()> for State {
        fn bind(
            _: &mut Self,
            _: &DisplayHandle,
            _: &Client,
            resource: New<ext_idle_notifier_v1::ExtIdleNotifierV1>,
            _: &(),
            init: &mut DataInit<'_, Self>,
        ) {
            init.init(resource, ());
        }
    }

    impl Dispatch<ext_idle_notifier_v1::ExtIdleNotifierV1, ()> for State {
        fn request(
            state: &mut Self,
            _: &Client,
            _: &ext_idle_notifier_v1::ExtIdleNotifierV1,
            request: ext_idle_notifier_v1::Request,
            _: &(),
            _: &DisplayHandle,
            init: &mut DataInit<'_, Self>,
        ) {
            if let ext_idle_notifier_v1::Request::GetIdleNotification { id, timeout, .. } = request
            {
                let n = init.init(id, ());
                let timeout = Duration::from_millis(u64::from(timeout));
                state.notifications.push((n, timeout, false));
            }
        }
    }

    impl Dispatch<ext_idle_notification_v1::ExtIdleNotificationV1, ()> for State {
        fn request(
            _: &mut Self,
            _: &Client,
            _: &ext_idle_notification_v1::ExtIdleNotificationV1,
            _: ext_idle_notification_v1::Request,
            _: &(),
            _: &DisplayHandle,
            _: &mut DataInit<'_, Self>,
        ) {
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wayland_compositor_with_ext_idle_notify_tells_when_the_threshold_passes() {
    let (_bus, bus) = start_bus();
    let dir = tempfile::tempdir().unwrap();
    let user = LastInput::now();
    let compositor = compositor::Compositor::start(dir.path(), user.clone());
    let display = compositor.socket.to_str().unwrap().to_owned();
    let mc = Metaclaw::start(&[
        ("DBUS_SESSION_BUS_ADDRESS", &bus),
        ("WAYLAND_DISPLAY", &display),
        ("XDG_SESSION_TYPE", "wayland"),
    ])
    .await;
    let s = mc.scheduler().await;
    assert_eq!(s["sources"]["idle_probe"], "ext-idle-notify", "{s}");
    let passed = s["sources"]["idle_passed_over"].as_array().unwrap();
    assert_eq!(passed.len(), 2, "{s}");
    assert_eq!(
        s["text"]["idle"],
        "keyboard idle from the Wayland compositor (ext-idle-notify) (not available: ".to_owned()
            + passed[0].as_str().unwrap()
            + "; "
            + passed[1].as_str().unwrap()
            + ")",
        "{s}"
    );
    mc.open_close_open(async || user.touch()).await;
}
