//! The desktop app end to end: `metaclaw` (no command) under its own Xvfb and a private D-Bus
//! daemon, with a stand-in StatusNotifierWatcher (there is no panel on CI) the tray icon
//! registers with. The tray's menu is read and clicked over dbusmenu (`gdbus`), as a panel
//! would: Pause learning shows in `/api/scheduler`, the menu turns to Resume learning, and
//! Quit stops the engine (exit 0, port closed). Xvfb, dbus-daemon and gdbus are required
//! (scripts/deps.sh installs them): this test fails, not skips, without them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::daemon::{PROXY_KEY, bin, free_port};
use serde_json::Value;

const POLL: Duration = Duration::from_millis(50);
/// Start-up of the app (WebKit included) on a slow CI machine.
const START_DEADLINE: Duration = Duration::from_secs(90);
const STEP_DEADLINE: Duration = Duration::from_secs(30);

/// A process killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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

/// A private session bus: (daemon, address).
fn start_bus() -> (Killed, String) {
    let mut child = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon is required (scripts/deps.sh installs it)");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(!line.trim().is_empty(), "dbus-daemon printed no address");
    (Killed(child), line.trim().to_string())
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
        if let Some(l) = here.find("'label': <'") {
            let text = &here[l + "'label': <'".len()..];
            if let Some(end) = text.find("'>") {
                out.push((id, text[..end].to_string()));
            }
        }
    }
    out
}

fn id_of(items: &[(i32, String)], label: &str) -> i32 {
    items
        .iter()
        .find(|(_, l)| l == label)
        .map(|(i, _)| *i)
        .unwrap_or_else(|| panic!("no `{label}` in the menu: {items:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn tray_menu_pauses_learning_and_quits() {
    let (_xvfb, display) = start_xvfb();
    let (_bus_daemon, bus) = start_bus();
    let items = Arc::new(Mutex::new(vec![]));
    let _watcher = zbus::connection::Builder::address(bus.as_str())
        .unwrap()
        .serve_at(
            "/StatusNotifierWatcher",
            Watcher {
                items: items.clone(),
            },
        )
        .unwrap()
        .name("org.kde.StatusNotifierWatcher")
        .unwrap()
        .build()
        .await
        .unwrap();

    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!("proxy:\n  port: {port}\n"),
    )
    .unwrap();
    let log = home.path().join("app.log");
    let app = Command::new(bin())
        .env("METACLAW_HOME", home.path())
        .env("METACLAW_SECRET_BACKEND", "file")
        .env("METACLAW_PROXY_API_KEY", PROXY_KEY)
        .env_remove("METACLAW_LLM_API_KEY")
        .env_remove("WAYLAND_DISPLAY")
        .env("DISPLAY", &display)
        .env("GDK_BACKEND", "x11")
        .env("NO_AT_BRIDGE", "1")
        .env("DBUS_SESSION_BUS_ADDRESS", &bus)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(home.path().join("app.err")).unwrap())
        .spawn()
        .unwrap();
    let mut app = Killed(app);
    let logs = || {
        format!(
            "{}{}",
            std::fs::read_to_string(&log).unwrap_or_default(),
            std::fs::read_to_string(home.path().join("app.err")).unwrap_or_default()
        )
    };

    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let healthz = format!("{base}/healthz");
    let mut exited = None;
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
        logs()
    );

    // The tray icon registers with the watcher; its menu is then on the bus.
    let (dest, path) = tokio::task::block_in_place(|| {
        poll("the tray icon to register", STEP_DEADLINE, || {
            items.lock().unwrap().first().cloned()
        })
    });
    let (dest, path) = if path.starts_with('/') {
        (dest, path)
    } else {
        (path, "/StatusNotifierItem".to_string())
    };
    let menu_reply = gdbus(
        &bus,
        &dest,
        &path,
        "org.freedesktop.DBus.Properties.Get",
        &["org.kde.StatusNotifierItem", "Menu"],
    )
    .unwrap_or_else(|e| panic!("no StatusNotifierItem at {dest} {path}: {e}"));
    let menu_path = menu_reply
        .split('\'')
        .nth(1)
        .unwrap_or_else(|| panic!("no menu path in {menu_reply}"))
        .to_string();
    let layout = |want: &str| {
        let (dest, menu_path, bus) = (dest.clone(), menu_path.clone(), bus.clone());
        let want = want.to_string();
        tokio::task::block_in_place(move || {
            let end = Instant::now() + STEP_DEADLINE;
            loop {
                let last = gdbus(
                    &bus,
                    &dest,
                    &menu_path,
                    "com.canonical.dbusmenu.GetLayout",
                    &["0", "-1", "@as []"],
                );
                let items = labels(last.as_deref().unwrap_or_default());
                if items.iter().any(|(_, l)| *l == want) {
                    return items;
                }
                assert!(
                    Instant::now() < end,
                    "no `{want}` in the tray menu; last layout: {last:?}"
                );
                std::thread::sleep(POLL);
            }
        })
    };
    let click = |id: i32| {
        let reply = gdbus(
            &bus,
            &dest,
            &menu_path,
            "com.canonical.dbusmenu.Event",
            &[&id.to_string(), "clicked", "<0>", "0"],
        );
        assert!(reply.is_ok(), "clicking item {id} failed: {reply:?}");
    };

    let items = layout("Quit");
    let names: Vec<&str> = items.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(
        names.first().copied(),
        Some(format!("MetaClaw — serving on 127.0.0.1:{port}").as_str()),
        "{names:?}"
    );
    assert!(
        names.get(1).is_some_and(|l| l.starts_with("Learning: ")),
        "{names:?}"
    );
    for want in [
        "Pause learning",
        "30 minutes",
        "1 hour",
        "2 hours",
        "Until tomorrow morning",
        "Until resumed",
        "Open dashboard",
        "Quit",
    ] {
        assert!(names.contains(&want), "no `{want}` in {names:?}");
    }
    assert!(!names.contains(&"Resume learning"), "{names:?}");

    // Pause learning ▸ Until resumed: the engine's scheduler says paused, with no end.
    click(id_of(&items, "Until resumed"));
    let token = std::fs::read_to_string(home.path().join("run/admin_token"))
        .unwrap()
        .trim()
        .to_string();
    let status: Value = tokio::task::block_in_place(|| {
        poll("/api/scheduler to report paused", STEP_DEADLINE, || {
            let v: Value = tokio::runtime::Handle::current().block_on(async {
                http.get(format!("{base}/api/scheduler"))
                    .bearer_auth(&token)
                    .send()
                    .await
                    .ok()?
                    .json()
                    .await
                    .ok()
            })?;
            (v["state"] == "paused").then_some(v)
        })
    });
    assert!(status["until"].is_null(), "{status}");
    // The menu follows: Resume learning replaces the Pause submenu, the learning line says so.
    let items = layout("Resume learning");
    let names: Vec<&str> = items.iter().map(|(_, l)| l.as_str()).collect();
    assert!(!names.contains(&"Pause learning"), "{names:?}");
    assert!(
        names.contains(&"Learning: paused until resumed"),
        "{names:?}"
    );

    // Quit: the engine stops cleanly, the process exits 0, the port closes.
    click(id_of(&items, "Quit"));
    let status = tokio::task::block_in_place(|| {
        poll("the app to exit", STEP_DEADLINE, || {
            app.0.try_wait().unwrap()
        })
    });
    assert!(status.success(), "exit {status:?}\n{}", logs());
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} still open after Quit"
    );
    assert!(
        !home.path().join("run/admin_token").exists(),
        "run files left behind"
    );
}
