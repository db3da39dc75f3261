//! The desktop app end to end: `metaclaw` (no command) under its own Xvfb and a private D-Bus
//! daemon, with stand-ins for the panel's StatusNotifierWatcher (the tray icon registers with
//! it) and the notification server (there is no desktop on CI). The tray's menu is read and
//! clicked over dbusmenu (`gdbus`), as a panel would: every menu item is there, a second launch
//! shows the first one's window (which renders), Start at login writes the login item, Pause
//! learning shows in `/api/scheduler`, Mode ▸ restarts the engine in place with the new mode, a
//! refused key becomes a notification, "Log in to WeChat again" shows the plugin's QR code in
//! the window (read back from a screenshot with zbarimg), and Quit stops the engine (exit 0,
//! port closed). Xvfb, dbus-daemon, gdbus, xdotool, ImageMagick and zbarimg are required
//! (scripts/deps.sh installs them): these tests fail, not skip, without them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::bus::{Killed, start_bus};
use common::daemon::{PROXY_KEY, bin, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream, Fault};
use metaclaw_e2e::fake_wechat::{FakeWechat, LINK};
use serde_json::{Value, json};

const POLL: Duration = Duration::from_millis(50);
/// Start-up of the app (WebKit included) on a slow CI machine.
const START_DEADLINE: Duration = Duration::from_secs(90);
const STEP_DEADLINE: Duration = Duration::from_secs(30);

fn poll<T>(what: &str, deadline: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(POLL);
    }
}

/// Xvfb on a free display number.
fn start_xvfb() -> (Killed, String) {
    let base = 300 + std::process::id() % 500;
    for n in base..base + 64 {
        if Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            || Path::new(&format!("/tmp/.X{n}-lock")).exists()
        {
            continue;
        }
        let child = Command::new("Xvfb")
            .arg(format!(":{n}"))
            .args(["-nolisten", "tcp", "-screen", "0", "1280x800x24"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is required (scripts/deps.sh installs it)");
        let mut x = Killed(child);
        let pid = x.0.id().to_string();
        let end = Instant::now() + Duration::from_secs(20);
        let ours = loop {
            if x.0.try_wait().unwrap().is_some() {
                break false; // lost the number to another server
            }
            let lock = std::fs::read_to_string(format!("/tmp/.X{n}-lock")).unwrap_or_default();
            if lock.trim() == pid && Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
                break true;
            }
            assert!(Instant::now() < end, "Xvfb :{n} did not come up");
            std::thread::sleep(POLL);
        };
        if ours {
            return (x, format!(":{n}"));
        }
    }
    panic!("no free X display number from {base}");
}

/// The stand-in `org.kde.StatusNotifierWatcher`: records who registered what.
struct Watcher {
    items: Arc<Mutex<Vec<(String, String)>>>,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    fn register_status_notifier_item(
        &self,
        service: &str,
        #[zbus(header)] header: zbus::message::Header<'_>,
    ) {
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        self.items
            .lock()
            .unwrap()
            .push((sender, service.to_string()));
    }

    fn register_status_notifier_host(&self, _service: &str) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.items
            .lock()
            .unwrap()
            .iter()
            .map(|(s, p)| format!("{s}{p}"))
            .collect()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }
}

/// The stand-in notification server: records (summary, body) of every notification.
struct Notifications {
    shown: Arc<Mutex<Vec<(String, String)>>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Notifications {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        _app_name: &str,
        _replaces_id: u32,
        _app_icon: &str,
        summary: &str,
        body: &str,
        _actions: Vec<String>,
        _hints: HashMap<String, zbus::zvariant::OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut shown = self.shown.lock().unwrap();
        shown.push((summary.to_string(), body.to_string()));
        u32::try_from(shown.len()).unwrap()
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "stand-in".into(),
            "metaclaw-tests".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    fn close_notification(&self, _id: u32) {}
}

fn gdbus(bus: &str, dest: &str, path: &str, method: &str, args: &[&str]) -> Result<String, String> {
    let o = Command::new("gdbus")
        .args(["call", "--session", "--dest", dest, "--object-path", path])
        .args(["--method", method, "--"])
        .args(args)
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .output()
        .expect("gdbus is required (libglib2.0-bin)");
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(format!(
            "{dest} {path} {method}: {}",
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

/// (id, label) of every labelled item in a `GetLayout` reply as gdbus prints it.
fn labels(layout: &str) -> Vec<(i32, String)> {
    let mut out = vec![];
    let mut rest = layout;
    while let Some(at) = rest.find("<(") {
        rest = &rest[at + 2..];
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        let Ok(id) = digits.parse::<i32>() else {
            continue;
        };
        let next = rest.find("<(").unwrap_or(rest.len());
        let here = &rest[..next];
        // GVariant text quotes a label holding an apostrophe with double quotes.
        for (open, close) in [("'label': <'", "'>"), ("'label': <\"", "\">")] {
            if let Some(l) = here.find(open) {
                let text = &here[l + open.len()..];
                if let Some(end) = text.find(close) {
                    out.push((id, text[..end].to_string()));
                }
            }
        }
    }
    out
}

/// Whether the check item labelled `label` is checked, in a `GetLayout` reply.
fn toggled(layout: &str, label: &str) -> Option<bool> {
    let at = layout.find(&format!("'label': <'{label}'>"))?;
    let start = layout[..at].rfind("<(").unwrap_or(0);
    let end = layout[at..].find("<(").map_or(layout.len(), |e| at + e);
    let item = &layout[start..end];
    if item.contains("'toggle-state': <1>") {
        Some(true)
    } else if item.contains("'toggle-state': <0>") {
        Some(false)
    } else {
        None
    }
}

fn id_of(items: &[(i32, String)], label: &str) -> i32 {
    items
        .iter()
        .find(|(_, l)| l == label)
        .map(|(i, _)| *i)
        .unwrap_or_else(|| panic!("no `{label}` in the menu: {items:?}"))
}

/// `metaclaw ARGS` with `home` as `$METACLAW_HOME` and `user_home` as `$HOME`, on `display`
/// and `bus`.
fn app_command(home: &Path, user_home: &Path, display: &str, bus: &str, args: &[&str]) -> Command {
    // A program a test installed in the user's bin/ (as a package installs /usr/bin/metaclaw)
    // runs instead of the built one.
    let installed = user_home.join("bin/metaclaw");
    let mut c = Command::new(if installed.is_file() {
        installed
    } else {
        bin()
    });
    // Stand-in programs (the WeChat plugin's) come first when a test put them there.
    let fakes = user_home.join("bin");
    if fakes.is_dir() {
        let mut dirs = vec![fakes];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        c.env("PATH", std::env::join_paths(dirs).unwrap());
    }
    c.args(args)
        .env("METACLAW_HOME", home)
        .env("HOME", user_home)
        .env_remove("XDG_CONFIG_HOME")
        .env("METACLAW_SECRET_BACKEND", "file")
        .env("METACLAW_PROXY_API_KEY", PROXY_KEY)
        .env_remove("METACLAW_LLM_API_KEY")
        .env_remove("WAYLAND_DISPLAY")
        .env("DISPLAY", display)
        .env("GDK_BACKEND", "x11")
        .env("NO_AT_BRIDGE", "1")
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .stdin(Stdio::null());
    c
}

/// The session the app is about to start in, for a test to prepare.
struct Session<'a> {
    home: &'a Path,
    user_home: &'a Path,
    display: &'a str,
    bus: &'a str,
    port: u16,
}

impl Session<'_> {
    /// `metaclaw ARGS` in this session (a daemon started before the app, say).
    fn command(&self, args: &[&str]) -> Command {
        app_command(self.home, self.user_home, self.display, self.bus, args)
    }
}

/// The app under its own display and bus, with the stand-ins serving on that bus.
struct Desktop {
    app: Killed,
    display: String,
    bus: String,
    home: tempfile::TempDir,
    /// `$HOME` of the app: agents are looked for there, the login item is written there.
    user_home: tempfile::TempDir,
    port: u16,
    items: Arc<Mutex<Vec<(String, String)>>>,
    notes: Arc<Mutex<Vec<(String, String)>>>,
    http: reqwest::Client,
    _stand_ins: zbus::Connection,
    _bus_daemon: Killed,
    _xvfb: Killed,
}

impl Desktop {
    /// Starts `metaclaw ARGS` with `config` (`{port}` is replaced) and `secrets`, and waits
    /// until it answers `/healthz`.
    async fn start(config: &str, secrets: Option<&str>, args: &[&str]) -> Desktop {
        Desktop::start_with(config, secrets, args, |_| {}).await
    }

    /// [`Desktop::start`], after `prepare` readied the session (a user's home whose `bin/`
    /// goes first on the app's `PATH`, a daemon already running…).
    async fn start_with(
        config: &str,
        secrets: Option<&str>,
        args: &[&str],
        prepare: impl FnOnce(&Session),
    ) -> Desktop {
        let mut d = Desktop::launch(config, secrets, args, prepare).await;
        d.wait_healthy();
        d
    }

    /// Launches the app without waiting for it to serve.
    async fn launch(
        config: &str,
        secrets: Option<&str>,
        args: &[&str],
        prepare: impl FnOnce(&Session),
    ) -> Desktop {
        let (xvfb, display) = start_xvfb();
        let (bus_daemon, bus) = start_bus();
        let items = Arc::new(Mutex::new(vec![]));
        let notes = Arc::new(Mutex::new(vec![]));
        let stand_ins = zbus::connection::Builder::address(bus.as_str())
            .unwrap()
            .serve_at(
                "/StatusNotifierWatcher",
                Watcher {
                    items: items.clone(),
                },
            )
            .unwrap()
            .serve_at(
                "/org/freedesktop/Notifications",
                Notifications {
                    shown: notes.clone(),
                },
            )
            .unwrap()
            .name("org.kde.StatusNotifierWatcher")
            .unwrap()
            .name("org.freedesktop.Notifications")
            .unwrap()
            .build()
            .await
            .unwrap();
        let home = tempfile::tempdir().unwrap();
        let user_home = tempfile::tempdir().unwrap();
        let port = free_port();
        std::fs::write(
            home.path().join("config.yaml"),
            config.replace("{port}", &port.to_string()),
        )
        .unwrap();
        if let Some(secrets) = secrets {
            std::fs::write(home.path().join("secrets.yaml"), secrets).unwrap();
        }
        prepare(&Session {
            home: home.path(),
            user_home: user_home.path(),
            display: &display,
            bus: &bus,
            port,
        });
        let log = home.path().join("app.log");
        let app = app_command(home.path(), user_home.path(), &display, &bus, args)
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(home.path().join("app.err")).unwrap())
            .spawn()
            .unwrap();
        Desktop {
            app: Killed(app),
            display,
            bus,
            home,
            user_home,
            port,
            items,
            notes,
            http: reqwest::Client::new(),
            _stand_ins: stand_ins,
            _bus_daemon: bus_daemon,
            _xvfb: xvfb,
        }
    }

    /// Waits until the app answers `/healthz` on its port.
    fn wait_healthy(&mut self) {
        let healthz = format!("{}/healthz", self.base());
        let mut exited = None;
        let (app, http) = (&mut self.app, &self.http);
        tokio::task::block_in_place(|| {
            poll("/healthz", START_DEADLINE, || {
                if let Some(status) = app.0.try_wait().unwrap() {
                    exited = Some(status);
                    return Some(());
                }
                let ok = tokio::runtime::Handle::current()
                    .block_on(http.get(&healthz).send())
                    .is_ok_and(|r| r.status().is_success());
                ok.then_some(())
            })
        });
        assert!(
            exited.is_none(),
            "the app exited early: {exited:?}\n{}",
            self.logs()
        );
    }

    /// A window named `name` (a dialog), once one is mapped.
    fn window_named(&self, name: &str) -> String {
        tokio::task::block_in_place(|| {
            poll(&format!("a window named {name}"), START_DEADLINE, || {
                let o = Command::new("xdotool")
                    .args(["search", "--onlyvisible", "--name", &format!("^{name}$")])
                    .env("DISPLAY", &self.display)
                    .output()
                    .expect("xdotool is required (scripts/deps.sh installs it)");
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .next()
                    .map(str::to_owned)
            })
        })
    }

    /// The body of the notification titled `summary`, once one was shown.
    fn note(&self, summary: &str) -> String {
        tokio::task::block_in_place(|| {
            poll(
                &format!("the notification `{summary}`"),
                STEP_DEADLINE,
                || {
                    self.notes
                        .lock()
                        .unwrap()
                        .iter()
                        .find(|(s, _)| s == summary)
                        .map(|(_, body)| body.clone())
                },
            )
        })
    }

    /// Presses `key` in window `id`, as a user would (focus, then a real key event).
    fn press(&self, id: &str, key: &str) {
        for args in [vec!["windowfocus", "--sync", id], vec!["key", key]] {
            let o = Command::new("xdotool")
                .args(&args)
                .env("DISPLAY", &self.display)
                .output()
                .unwrap();
            assert!(o.status.success(), "xdotool {args:?}: {o:?}");
        }
    }

    /// The app's exit, once it exits.
    fn exit_status(&mut self) -> std::process::ExitStatus {
        let app = &mut self.app;
        tokio::task::block_in_place(|| {
            poll("the app to exit", STEP_DEADLINE, || {
                app.0.try_wait().unwrap()
            })
        })
    }

    /// `metaclaw ARGS` in this desktop session.
    fn command(&self, args: &[&str]) -> Command {
        app_command(
            self.home.path(),
            self.user_home.path(),
            &self.display,
            &self.bus,
            args,
        )
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn logs(&self) -> String {
        format!(
            "{}{}",
            std::fs::read_to_string(self.home.path().join("app.log")).unwrap_or_default(),
            std::fs::read_to_string(self.home.path().join("app.err")).unwrap_or_default()
        )
    }

    fn config(&self) -> PathBuf {
        self.home.path().join("config.yaml")
    }

    /// The admin token from the run files. After an in-place restart the new engine answers
    /// before it has published them again, so the file is waited for.
    fn token(&self) -> String {
        let file = self.home.path().join("run/admin_token");
        poll("the admin token file", STEP_DEADLINE, || {
            std::fs::read_to_string(&file)
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        })
    }

    /// `GET path` on the admin API until `want` holds for the answer.
    fn admin_until(&self, path: &str, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let url = format!("{}{path}", self.base());
        tokio::task::block_in_place(|| {
            poll(what, STEP_DEADLINE, || {
                let token = std::fs::read_to_string(self.home.path().join("run/admin_token"))
                    .ok()?
                    .trim()
                    .to_string();
                let v: Value = tokio::runtime::Handle::current().block_on(async {
                    self.http
                        .get(&url)
                        .bearer_auth(&token)
                        .send()
                        .await
                        .ok()?
                        .json()
                        .await
                        .ok()
                })?;
                want(&v).then_some(v)
            })
        })
    }

    /// The tray's menu on the bus, once the icon registered.
    fn menu(&self) -> Menu {
        self.menu_not_of(None)
    }

    /// The menu of a tray icon registered by another connection than `old`'s (a process that
    /// became a new program registers again, from a new connection).
    fn menu_not_of(&self, old: Option<&Menu>) -> Menu {
        let (dest, path) = tokio::task::block_in_place(|| {
            poll("the tray icon to register", START_DEADLINE, || {
                self.items
                    .lock()
                    .unwrap()
                    .iter()
                    .rev()
                    .find(|(sender, _)| old.is_none_or(|m| *sender != m.sender))
                    .cloned()
            })
        });
        let sender = dest.clone();
        let (dest, path) = if path.starts_with('/') {
            (dest, path)
        } else {
            (path, "/StatusNotifierItem".to_string())
        };
        let reply = gdbus(
            &self.bus,
            &dest,
            &path,
            "org.freedesktop.DBus.Properties.Get",
            &["org.kde.StatusNotifierItem", "Menu"],
        )
        .unwrap_or_else(|e| panic!("no StatusNotifierItem at {dest} {path}: {e}"));
        let menu_path = reply
            .split('\'')
            .nth(1)
            .unwrap_or_else(|| panic!("no menu path in {reply}"))
            .to_string();
        Menu {
            bus: self.bus.clone(),
            sender,
            dest,
            path: menu_path,
        }
    }

    /// X windows named MetaClaw that are mapped.
    fn visible_windows(&self) -> Vec<String> {
        let o = Command::new("xdotool")
            .args(["search", "--onlyvisible", "--name", "^MetaClaw$"])
            .env("DISPLAY", &self.display)
            .output()
            .expect("xdotool is required (scripts/deps.sh installs it)");
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    /// The app's window, once one is shown. Its first showing starts WebKit (on a fresh
    /// machine with cold font and shader caches), so it has the start-up deadline; a timeout
    /// says what the app logged.
    fn shown_window(&self) -> String {
        tokio::task::block_in_place(|| {
            let end = Instant::now() + START_DEADLINE;
            loop {
                if let Some(id) = self.visible_windows().into_iter().next() {
                    return id;
                }
                assert!(
                    Instant::now() < end,
                    "timed out waiting for the window to show; the app logged:\n{}",
                    self.logs()
                );
                std::thread::sleep(POLL);
            }
        })
    }

    /// A screenshot of window `id` in `name` (in the home), when the window can be read.
    fn screenshot(&self, id: &str, name: &str) -> Option<PathBuf> {
        let shot = self.home.path().join(name);
        let o = Command::new("import")
            .args(["-window", id])
            .arg(&shot)
            .env("DISPLAY", &self.display)
            .output()
            .expect("ImageMagick's import is required (scripts/deps.sh installs it)");
        o.status.success().then_some(shot)
    }

    /// How many distinct colours a screenshot of window `id` has (a blank window has one).
    fn colours(&self, id: &str) -> usize {
        let Some(shot) = self.screenshot(id, "window.png") else {
            return 0;
        };
        let o = Command::new("identify")
            .args(["-format", "%k"])
            .arg(&shot)
            .output()
            .expect("ImageMagick's identify is required");
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse()
            .unwrap_or(0)
    }

    /// What the QR code in a screenshot of window `id` says, when zbarimg finds one.
    fn qr_text(&self, id: &str) -> Option<String> {
        let shot = self.screenshot(id, "qr.png")?;
        let o = Command::new("zbarimg")
            .args(["--quiet", "--raw"])
            .arg(&shot)
            .output()
            .expect("zbarimg is required (scripts/deps.sh installs zbar-tools)");
        let text = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        (o.status.success() && !text.is_empty()).then_some(text)
    }

    fn quit(mut self, menu: &Menu) {
        menu.click("Quit");
        let status = tokio::task::block_in_place(|| {
            poll("the app to exit", STEP_DEADLINE, || {
                self.app.0.try_wait().unwrap()
            })
        });
        assert!(status.success(), "exit {status:?}\n{}", self.logs());
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err(),
            "port {} still open after Quit",
            self.port
        );
        assert!(
            !self.home.path().join("run/admin_token").exists(),
            "run files left behind"
        );
        assert!(
            !self.home.path().join("run/desktop.sock").exists(),
            "instance socket left behind"
        );
    }
}

/// The tray's menu, read and clicked over dbusmenu.
struct Menu {
    bus: String,
    /// The connection that registered the tray icon.
    sender: String,
    dest: String,
    path: String,
}

impl Menu {
    /// The labelled items once one is labelled `want`.
    fn layout(&self, want: &str) -> Vec<(i32, String)> {
        tokio::task::block_in_place(move || {
            let end = Instant::now() + STEP_DEADLINE;
            loop {
                let last = gdbus(
                    &self.bus,
                    &self.dest,
                    &self.path,
                    "com.canonical.dbusmenu.GetLayout",
                    &["0", "-1", "@as []"],
                );
                let items = labels(last.as_deref().unwrap_or_default());
                if items.iter().any(|(_, l)| l == want) {
                    return items;
                }
                assert!(
                    Instant::now() < end,
                    "no `{want}` in the tray menu; last layout: {last:?}"
                );
                std::thread::sleep(POLL);
            }
        })
    }

    /// The labelled items once the check item `label` is `checked`.
    fn layout_checked(&self, label: &str, checked: bool) -> Vec<(i32, String)> {
        tokio::task::block_in_place(move || {
            let end = Instant::now() + STEP_DEADLINE;
            loop {
                let last = gdbus(
                    &self.bus,
                    &self.dest,
                    &self.path,
                    "com.canonical.dbusmenu.GetLayout",
                    &["0", "-1", "@as []"],
                )
                .unwrap_or_default();
                if toggled(&last, label) == Some(checked) {
                    return labels(&last);
                }
                assert!(
                    Instant::now() < end,
                    "`{label}` is not checked={checked} in the tray menu; last layout: {last:?}"
                );
                std::thread::sleep(POLL);
            }
        })
    }

    /// Clicks the item labelled `label`. The tray rebuilds its menu when what it shows
    /// changes (new ids), so a click on an id that just went away is tried again.
    fn click(&self, label: &str) {
        let end = Instant::now() + STEP_DEADLINE;
        loop {
            let id = id_of(&self.layout(label), label);
            let reply = gdbus(
                &self.bus,
                &self.dest,
                &self.path,
                "com.canonical.dbusmenu.Event",
                &[&id.to_string(), "clicked", "<0>", "0"],
            );
            match reply {
                Ok(_) => return,
                Err(e) if e.contains("does not refer to a menu item") => {
                    assert!(Instant::now() < end, "clicking `{label}` failed: {e}");
                }
                Err(e) => panic!("clicking `{label}` failed: {e}"),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tray_menu_second_launch_start_at_login_pause_and_quit() {
    // Not set up yet, started hidden (as at login): the tray only, no window. One learned
    // skill waits for review (`skills.review: ask` filed it).
    let d = Desktop::start_with("proxy:\n  port: {port}\n", None, &["--hidden"], |s| {
        let folder = s.home.join("skills/.proposals/tea-brewing");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            "---\nname: tea-brewing\ndescription: Use when brewing tea\n---\n\nWarm the pot first.\n",
        )
        .unwrap();
        std::fs::write(
            folder.join("PROPOSAL.json"),
            r#"{"name": "tea-brewing", "description": "Use when brewing tea", "sessions": ["s1"], "improves": false, "at_ms": 1}"#,
        )
        .unwrap();
    })
    .await;
    let port = d.port;
    let menu = d.menu();
    let items = menu.layout("Quit");
    let names: Vec<&str> = items.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(
        names.first().copied(),
        Some(format!("MetaClaw — serving on 127.0.0.1:{port}").as_str()),
        "{names:?}"
    );
    assert_eq!(
        names.get(1).copied(),
        Some("No agent connected"),
        "{names:?}"
    );
    assert!(
        names.get(2).is_some_and(|l| l.starts_with("Learning: ")),
        "{names:?}"
    );
    for want in [
        "Pause learning",
        "30 minutes",
        "1 hour",
        "2 hours",
        "Until tomorrow morning",
        "Until resumed",
        "Train now",
        "Mode",
        "Skills only",
        "Reinforcement learning",
        "MadMax",
        "Open dashboard",
        "Settings",
        "Start at login",
        "Quit",
        "Review 1 learned skill…",
    ] {
        assert!(names.contains(&want), "no `{want}` in {names:?}");
    }
    assert!(!names.contains(&"Resume learning"), "{names:?}");
    menu.layout_checked("Skills only", true);
    menu.layout_checked("Reinforcement learning", false);
    menu.layout_checked("Start at login", false);
    assert!(d.visible_windows().is_empty(), "--hidden opened a window");

    // A second launch shows the first one's window and exits 0; the window renders the UI.
    let second = d.command(&[]).output().unwrap();
    assert!(second.status.success(), "{second:?}\n{}", d.logs());
    let said = String::from_utf8_lossy(&second.stdout);
    assert!(said.contains("already running"), "{said}");
    let window = d.shown_window();
    let colours = tokio::task::block_in_place(|| {
        poll("the window to render", START_DEADLINE, || {
            let n = d.colours(&window);
            (n > 64).then_some(n)
        })
    });
    assert!(colours > 64);
    // The review line opens the Skills screen, where the proposal waits.
    menu.click("Review 1 learned skill…");
    tokio::task::block_in_place(|| {
        poll("the window on the Skills screen", STEP_DEADLINE, || {
            d.logs()
                .contains("showing the window on Skills")
                .then_some(())
        })
    });

    // Start at login writes the login item, which starts MetaClaw hidden.
    menu.click("Start at login");
    let autostart = d.user_home.path().join(".config/autostart");
    let entry = tokio::task::block_in_place(|| {
        poll("the login item", STEP_DEADLINE, || {
            let file = std::fs::read_dir(&autostart).ok()?.next()?.ok()?.path();
            // The file exists a moment before its text is written: wait for its Exec line.
            std::fs::read_to_string(file)
                .ok()
                .filter(|text| text.lines().any(|l| l.starts_with("Exec=")))
        })
    });
    assert!(entry.contains("--hidden"), "{entry}");
    let exe = bin().canonicalize().unwrap();
    assert!(entry.contains(exe.to_str().unwrap()), "{entry}");
    menu.layout_checked("Start at login", true);

    // Pause learning ▸ Until resumed: the engine's scheduler says paused, with no end.
    menu.click("Until resumed");
    let status = d.admin_until("/api/scheduler", "/api/scheduler to say paused", |v| {
        v["state"] == "paused"
    });
    assert!(status["until"].is_null(), "{status}");
    // The menu follows: Resume learning replaces the Pause submenu, the learning line says so.
    let items = menu.layout("Resume learning");
    let names: Vec<&str> = items.iter().map(|(_, l)| l.as_str()).collect();
    assert!(!names.contains(&"Pause learning"), "{names:?}");
    assert!(
        names.contains(&"Learning: paused until resumed"),
        "{names:?}"
    );
    d.quit(&menu);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_launch_opens_setup_in_a_window_that_renders() {
    // As from the menu entry: `metaclaw`, no arguments, nothing set up yet.
    let d = Desktop::start("proxy:\n  port: {port}\n", None, &[]).await;
    let window = d.shown_window();
    assert!(
        d.logs().contains("opening the window on Setup"),
        "{}",
        d.logs()
    );
    tokio::task::block_in_place(|| {
        poll("the window to render", START_DEADLINE, || {
            (d.colours(&window) > 64).then_some(())
        })
    });
    let menu = d.menu();
    d.quit(&menu);
}

#[tokio::test(flavor = "multi_thread")]
async fn mode_restarts_in_place_and_a_refused_key_is_notified() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let config = format!(
        "# my settings\nmode: skills_only  # for now\nllm:\n  provider: custom\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {{port}}\nskills:\n  enabled: false\n",
        fake.base_url_openai()
    );
    let d = Desktop::start(&config, Some("llm.api_key: sk-desktop-test\n"), &[]).await;
    let token = d.token();
    let menu = d.menu();

    // Train now in skills_only runs the learning there is through the admin API: memory
    // consolidation (and skill evolution, off in this config, says why).
    menu.click("Train now");
    tokio::task::block_in_place(|| {
        poll("Train now to consolidate memory", STEP_DEADLINE, || {
            d.logs()
                .contains("train now: consolidated memory")
                .then_some(())
        })
    });

    // Mode ▸ Reinforcement learning: written like `metaclaw config set mode rl` (comments
    // kept), and the engine comes back on the same port, with the same token, in rl.
    menu.click("Reinforcement learning");
    let status = d.admin_until("/api/status", "/api/status to report rl", |v| {
        v["mode"] == "rl"
    });
    assert_eq!(status["mode"], "rl");
    let written = std::fs::read_to_string(d.config()).unwrap();
    assert!(written.contains("mode: rl"), "{written}");
    assert!(written.contains("# my settings"), "{written}");
    assert_eq!(
        d.token(),
        token,
        "the admin token changed across the restart"
    );
    menu.layout_checked("Reinforcement learning", true);
    menu.layout_checked("Skills only", false);
    assert!(
        d.logs().contains("starting again with the new settings"),
        "{}",
        d.logs()
    );

    // The provider refuses the key: the events bus survived the restart, and the desktop
    // says so once.
    fake.push_fault(Fault::Unauthorized);
    let reply = d
        .http
        .post(format!("{}/v1/chat/completions", d.base()))
        .bearer_auth(PROXY_KEY)
        .json(&json!({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 401);
    let (summary, body) = tokio::task::block_in_place(|| {
        poll("the notification", STEP_DEADLINE, || {
            d.notes.lock().unwrap().first().cloned()
        })
    });
    assert!(!summary.is_empty());
    assert!(
        body.starts_with("Your provider refused the API key"),
        "{body}"
    );
    assert!(!body.contains("sk-desktop-test"), "{body}");

    // In rl, Train now asks for a weight step; with no training backend configured it says
    // why none ran.
    menu.click("Train now");
    tokio::task::block_in_place(|| {
        poll("Train now to try a training step", STEP_DEADLINE, || {
            d.logs()
                .contains("train now: Training step failed: the training backend is not connected")
                .then_some(())
        })
    });
    d.quit(&menu);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_that_cannot_start_again_is_told_before_exiting() {
    let mut d = Desktop::start("proxy:\n  port: {port}\n", None, &["--hidden"]).await;
    // New settings the engine refuses, then the restart the UI asks for after applying them.
    std::fs::write(d.config(), "proxy:\n  port: 0\n").unwrap();
    let restarted = d
        .http
        .post(format!("{}/api/restart", d.base()))
        .bearer_auth(d.token())
        .send()
        .await
        .unwrap();
    assert!(restarted.status().is_success(), "{restarted:?}");
    let (summary, body) = tokio::task::block_in_place(|| {
        poll("the notification", STEP_DEADLINE, || {
            d.notes.lock().unwrap().first().cloned()
        })
    });
    assert_eq!(summary, "MetaClaw stopped");
    assert!(body.contains("proxy.port"), "{body}");
    let status = tokio::task::block_in_place(|| {
        poll("the app to exit", STEP_DEADLINE, || {
            d.app.0.try_wait().unwrap()
        })
    });
    assert_eq!(status.code(), Some(1), "{}", d.logs());
}

#[tokio::test(flavor = "multi_thread")]
async fn wechat_login_from_the_tray_shows_the_qr_code_in_the_window() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let config = format!(
        "llm:\n  provider: custom\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {{port}}\nclaw_type: openclaw\nwechat:\n  enabled: true\n",
        fake.base_url_openai()
    );
    let mut wechat = None;
    let d = Desktop::start_with(&config, None, &["--hidden"], |s| {
        let bin = s.user_home.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let wx = FakeWechat::new(&bin, s.user_home).unwrap();
        wx.install_plugin().unwrap();
        wechat = Some(wx);
    })
    .await;
    let wx = wechat.unwrap();
    let menu = d.menu();
    // Installed already: nothing to install at start, and the tray says so.
    menu.layout("OpenClaw's WeChat plugin is installed");
    assert!(d.visible_windows().is_empty(), "--hidden opened a window");

    menu.click("Log in to WeChat again");
    let waiting = d.admin_until("/api/wechat", "the login to wait for a scan", |v| {
        v["state"] == "waiting_for_scan"
    });
    assert_eq!(waiting["qr"]["url"], LINK);
    menu.layout("Scan the QR code with WeChat on your phone");
    let body = d.note("Scan the QR code with WeChat");
    assert!(body.contains("dashboard"), "{body}");
    // The window opened on the dashboard, and the QR code in it reads back as the link.
    let window = d.shown_window();
    let read = tokio::task::block_in_place(|| {
        poll("a readable QR code in the window", START_DEADLINE, || {
            d.qr_text(&window)
        })
    });
    assert_eq!(read, LINK);
    assert!(
        wx.calls()
            .contains(&"openclaw channels login --channel openclaw-weixin".to_owned()),
        "{:?}",
        wx.calls()
    );

    wx.scan().unwrap();
    d.admin_until("/api/wechat", "the login to connect", |v| {
        v["state"] == "connected"
    });
    menu.layout("WeChat is connected to OpenClaw");
    assert!(
        !wx.calls().iter().any(|c| c.starts_with("npx ")),
        "{:?}",
        wx.calls()
    );
    d.quit(&menu);
}

/// `metaclaw start --daemon` in the session, as install.sh starts it without a display;
/// returns the daemon's PID.
fn start_daemon_in(s: &Session) -> u32 {
    let o = s.command(&["start", "--daemon"]).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    std::fs::read_to_string(s.home.join("run/metaclaw.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Whether `pid` is a running process (not gone, not a zombie).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(") ")?;
            Some(!rest.starts_with('Z') && !rest.starts_with('X'))
        })
        .unwrap_or(false)
}

async fn a_running_daemon_is_taken_over(args: &[&str]) {
    let mut daemon = 0;
    let started = Instant::now();
    let mut d = Desktop::launch("proxy:\n  port: {port}\n", None, args, |s| {
        daemon = start_daemon_in(s);
    })
    .await;
    d.wait_healthy();
    let menu = d.menu();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(20), "took {took:?}");
    // The engine on the daemon's port is the app's own now; the daemon is gone.
    let status = d.admin_until("/api/status", "the app's engine to answer", |v| {
        v["pid"] == d.app.0.id()
    });
    assert_eq!(status["listen"], format!("127.0.0.1:{}", d.port));
    assert!(!running(daemon), "the daemon (PID {daemon}) still runs");
    let body = d.note("MetaClaw moved into the tray");
    assert!(body.contains(&format!("PID {daemon}")), "{body}");
    // `start --daemon` while the app runs: already running, exit 0, as status says.
    let again = d.command(&["start", "--daemon"]).output().unwrap();
    assert!(again.status.success(), "{again:?}");
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(
        said.contains(&format!(
            "MetaClaw is already running (the desktop app, PID {}, http://127.0.0.1:{})",
            d.app.0.id(),
            d.port
        )),
        "{said}"
    );
    if args.contains(&"--hidden") {
        assert!(d.visible_windows().is_empty(), "--hidden opened a window");
    } else {
        d.shown_window();
    }
    d.quit(&menu);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_daemon_is_taken_over_by_the_app() {
    a_running_daemon_is_taken_over(&[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_daemon_is_taken_over_by_the_app_started_hidden() {
    a_running_daemon_is_taken_over(&["--hidden"]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_port_held_by_another_program_is_told_and_the_app_exits_once_the_user_closes_it() {
    let mut held = None;
    let mut d = Desktop::launch("proxy:\n  port: {port}\n", None, &["--hidden"], |s| {
        held = Some(std::net::TcpListener::bind(("127.0.0.1", s.port)).unwrap());
    })
    .await;
    // Hidden in the tray: a notification names the port and who holds it (this test).
    let body = d.note("MetaClaw cannot start");
    assert!(
        body.contains(&format!("Port {} is already in use", d.port)),
        "{body}"
    );
    assert!(
        body.contains(&format!("(PID {})", std::process::id())),
        "{body}"
    );
    assert!(body.contains("desktop_smoke"), "{body}");
    // And the dialog, which the app waits on.
    let dialog = d.window_named("MetaClaw cannot start");
    assert!(
        d.app.0.try_wait().unwrap().is_none(),
        "exited before the user closed the dialog"
    );
    d.press(&dialog, "Escape");
    let status = d.exit_status();
    assert_eq!(status.code(), Some(1), "{}", d.logs());
    assert!(d.logs().contains("already in use"), "{}", d.logs());
    drop(held);
}

#[tokio::test(flavor = "multi_thread")]
async fn another_port_chosen_in_the_dialog_is_used_and_kept() {
    let mut held = None;
    let mut d = Desktop::launch("proxy:\n  port: {port}\n", None, &[], |s| {
        held = Some(std::net::TcpListener::bind(("127.0.0.1", s.port)).unwrap());
    })
    .await;
    let busy = d.port;
    let dialog = d.window_named("MetaClaw cannot start");
    // Enter: the default button, "Use port N".
    d.press(&dialog, "Return");
    let written = tokio::task::block_in_place(|| {
        poll("the new port in the config", STEP_DEADLINE, || {
            let text = std::fs::read_to_string(d.config()).ok()?;
            let port: u16 = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("port:"))?
                .trim()
                .parse()
                .ok()?;
            (port != busy).then_some(port)
        })
    });
    assert!(written > busy, "{written}");
    d.port = written;
    d.wait_healthy();
    let menu = d.menu();
    menu.layout(&format!("MetaClaw — serving on 127.0.0.1:{written}"));
    d.quit(&menu);
    drop(held);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_config_that_cannot_be_read_is_told_with_the_file_to_fix() {
    let mut d = Desktop::launch("proxy:\n  port: [{port}\n", None, &["--hidden"], |_| {}).await;
    let body = d.note("MetaClaw cannot start");
    assert!(
        body.starts_with("MetaClaw's settings cannot be read."),
        "{body}"
    );
    assert!(body.contains(&d.config().display().to_string()), "{body}");
    let dialog = d.window_named("MetaClaw cannot start");
    d.press(&dialog, "Escape");
    assert_eq!(d.exit_status().code(), Some(1), "{}", d.logs());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_home_that_cannot_be_written_is_told() {
    // `run/` is a file: MetaClaw cannot make its folder there, whoever runs it.
    let mut d = Desktop::launch("proxy:\n  port: {port}\n", None, &["--hidden"], |s| {
        std::fs::write(s.home.join("run"), "not a folder").unwrap();
    })
    .await;
    let body = d.note("MetaClaw cannot start");
    assert!(
        body.starts_with("MetaClaw's folder cannot be written."),
        "{body}"
    );
    let dialog = d.window_named("MetaClaw cannot start");
    d.press(&dialog, "Escape");
    assert_eq!(d.exit_status().code(), Some(1), "{}", d.logs());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replaced_program_is_offered_as_a_restart_and_comes_back_the_same() {
    // The app runs from the user's bin/ (as from /usr/bin), and an upgrade renames a new file
    // over it, as dpkg does. scripts/update-test.sh runs this test on the installed package
    // with a real upgrade instead: METACLAW_UPGRADE_COMMAND (apt-get) replaces
    // METACLAW_BIN, and the app must come back as METACLAW_UPGRADE_TO.
    let upgrade = std::env::var("METACLAW_UPGRADE_COMMAND").ok();
    let version = std::env::var("METACLAW_UPGRADE_TO")
        .unwrap_or_else(|_| env!("CARGO_PKG_VERSION").to_owned());
    let config = "# my settings\nproxy:\n  port: {port}  # kept\n";
    let d = Desktop::start_with(
        config,
        Some("llm.api_key: sk-kept-across\n"),
        &["--hidden"],
        |s| {
            if upgrade.is_none() {
                let dir = s.user_home.join("bin");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::copy(bin(), dir.join("metaclaw")).unwrap();
            }
        },
    )
    .await;
    let menu = d.menu();
    let before = d.admin_until("/api/status", "/api/status", |v| v["pid"].is_u64());
    assert!(before["update"]["restart_to"].is_null(), "{before}");
    let config_bytes = std::fs::read(d.config()).unwrap();
    let secrets_bytes = std::fs::read(d.home.path().join("secrets.yaml")).unwrap();

    match &upgrade {
        Some(command) => {
            let o = Command::new("sh").args(["-c", command]).output().unwrap();
            assert!(o.status.success(), "{command}: {o:?}");
        }
        None => {
            let installed = d.user_home.path().join("bin/metaclaw");
            let new = installed.with_file_name("metaclaw.dpkg-new");
            std::fs::copy(bin(), &new).unwrap();
            std::fs::rename(&new, &installed).unwrap();
        }
    }
    assert_eq!(
        d.note(&format!("MetaClaw {version} is installed")),
        "Choose \"Restart MetaClaw\" in the tray menu to run it."
    );
    menu.click(&format!("Restart MetaClaw ({version})"));

    // The same process becomes the program now on disk, serving again on the same port from
    // the same home: the new version, a fresh program-file watch, the same settings.
    let menu = d.menu_not_of(Some(&menu));
    let after = d.admin_until("/api/status", "the restarted app", |v| {
        v["pid"] == before["pid"] && v["update"]["restart_to"].is_null()
    });
    assert_eq!(after["version"], version.as_str());
    assert_eq!(after["listen"], before["listen"]);
    assert_eq!(after["home"], before["home"]);
    assert!(d.logs().contains("running the new version"), "{}", d.logs());
    assert_eq!(std::fs::read(d.config()).unwrap(), config_bytes);
    assert_eq!(
        std::fs::read(d.home.path().join("secrets.yaml")).unwrap(),
        secrets_bytes
    );
    d.quit(&menu);
}
