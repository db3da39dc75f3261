//! X11 idle detection against a real X server (Xvfb), and the guard that keeps `user-idle` off
//! displays it would crash on. Xvfb and xdotool are required (scripts/deps.sh installs them):
//! these tests fail, not skip, without them.
//!
//! `user-idle` only reads `$DISPLAY`, which is process-global, so the parts that query the
//! server run in a child process — this test binary re-run on one ignored test with its own
//! environment — instead of setting `$DISPLAY` under tests running in parallel threads.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use metaclaw_schedule::idle::{IdleProbe, X11Idle, x11_server_answers};

/// How long Xvfb may take to come up (slow CI machines included).
const START_DEADLINE: Duration = Duration::from_secs(20);
/// Poll interval while waiting for something observable (a socket, idle time growing).
const POLL: Duration = Duration::from_millis(20);
/// Selects what the child run does; absent in a normal test run.
const CHILD_ENV: &str = "METACLAW_IDLE_X11_CHILD";

/// An Xvfb server on a display number nobody uses, stopped on drop.
struct Xvfb {
    child: Child,
    number: u32,
    _dir: tempfile::TempDir,
}

impl Xvfb {
    fn display(&self) -> String {
        format!(":{}", self.number)
    }

    /// Starts Xvfb on the first free display from a per-process base; `auth` is an
    /// Xauthority file to require cookies from. `noreset` keeps the server from resetting (and
    /// its idle time with it) whenever its last client leaves — a desktop session always has
    /// clients, a bare Xvfb does not.
    fn start(auth: Option<&Path>, noreset: bool) -> Xvfb {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = 100 + std::process::id() % 800;
        let dir = tempfile::tempdir().unwrap();
        for _ in 0..64 {
            let n = base + NEXT.fetch_add(1, Ordering::Relaxed);
            if Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                || Path::new(&format!("/tmp/.X{n}-lock")).exists()
            {
                continue;
            }
            let log = dir.path().join(format!("xvfb-{n}.log"));
            let mut cmd = Command::new("Xvfb");
            cmd.arg(format!(":{n}"))
                .args(["-nolisten", "tcp", "-screen", "0", "640x480x24"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap());
            if noreset {
                cmd.arg("-noreset");
            }
            if let Some(auth) = auth {
                cmd.arg("-auth").arg(auth);
            }
            let mut child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    panic!("Xvfb is not installed (scripts/deps.sh installs it): {e}")
                }
                Err(e) => panic!("cannot start Xvfb: {e}"),
            };
            let display = format!(":{n}");
            // Ready when the server answers the handshake; an exit means another server won
            // the number, so try the next one.
            let deadline = Instant::now() + START_DEADLINE;
            let ready = loop {
                if child.try_wait().unwrap().is_some() {
                    break false;
                }
                // Another process may have started a server on the same number at the same
                // moment: only the one whose pid is in the lock file is ours.
                if lock_owner(n) == Some(child.id()) {
                    match x11_server_answers(&display) {
                        Ok(()) => break true,
                        // With -auth this process has no cookie: a refusal means it is up.
                        Err(e) if auth.is_some() && e.contains("refused") => break true,
                        Err(_) => {}
                    }
                }
                if Instant::now() >= deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "Xvfb {display} did not come up within {START_DEADLINE:?}: {}",
                        std::fs::read_to_string(&log).unwrap_or_default()
                    );
                }
                thread::sleep(POLL);
            };
            if ready {
                return Xvfb {
                    child,
                    number: n,
                    _dir: dir,
                };
            }
        }
        panic!("no free X display number from {base}");
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM lets Xvfb remove its socket and lock file; SIGKILL (Child::kill) would leave
        // them behind for every run. Bounded: SIGKILL and our own cleanup if it lingers.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            thread::sleep(POLL);
        }
        let killed = matches!(self.child.try_wait(), Ok(None));
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Only a server that did not get to clean up leaves files behind, and only ours may go.
        if killed && lock_owner(self.number) == Some(self.child.id()) {
            let _ = std::fs::remove_file(format!("/tmp/.X11-unix/X{}", self.number));
            let _ = std::fs::remove_file(format!("/tmp/.X{}-lock", self.number));
        }
    }
}

/// The pid in display `n`'s lock file, which the X server holding `n` writes.
fn lock_owner(n: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/tmp/.X{n}-lock"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// This test binary, re-run on [`child`] alone in `mode`, with `DISPLAY` (and `XAUTHORITY` if
/// given) set for it only.
fn child_command(mode: &str, display: &str, auth: Option<&Path>) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, mode)
    .env("DISPLAY", display)
    .env_remove("XAUTHORITY");
    if let Some(auth) = auth {
        cmd.env("XAUTHORITY", auth);
    }
    cmd
}

/// Runs the child and returns its output once it succeeded and said it ran.
fn run_child(mode: &str, display: &str, auth: Option<&Path>) -> String {
    let out = child_command(mode, display, auth).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child {mode} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    // A filter that matched nothing would also exit 0.
    assert!(
        stdout.contains(&format!("child {mode}: ok")),
        "child {mode} did not run:\n{stdout}\n{stderr}"
    );
    stdout
}

/// Polls `probe` until `ok` holds for its idle time, or fails at the deadline.
fn poll_idle(probe: &dyn IdleProbe, what: &str, ok: impl Fn(Duration) -> bool) -> Duration {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let idle = probe.idle_for().unwrap();
        if ok(idle) {
            return idle;
        }
        assert!(
            Instant::now() < deadline,
            "idle never {what} (last {idle:?})"
        );
        thread::sleep(POLL);
    }
}

/// The X11 half of the tests, run only as a child with `DISPLAY` set by the parent.
#[test]
#[ignore = "run by the X11 tests in a child process with its own DISPLAY"]
fn child() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        // Run by hand with --ignored: nothing to do without the parent's display.
        return;
    };
    // A server that resets when its last client leaves (hammer) may be mid-reset now, which
    // the check rightly reports as unusable: retry until it is back.
    let deadline = Instant::now() + Duration::from_secs(10);
    let x = loop {
        match X11Idle::try_connect() {
            Ok(x) => break x,
            Err(e) if mode != "hammer" || Instant::now() >= deadline => {
                panic!("X11Idle::connect() found no display: {e}")
            }
            Err(_) => thread::sleep(POLL),
        }
    };
    assert_eq!(x.name(), "x11");
    match mode.as_str() {
        "measure" => {
            // Nobody touches this server: idle grows.
            let before = poll_idle(&x, "reached 300 ms", |d| d >= Duration::from_millis(300));
            let status = match Command::new("xdotool")
                .args(["mousemove", "--sync", "10", "20"])
                .status()
            {
                Ok(s) => s,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    panic!("xdotool is not installed (scripts/deps.sh installs it): {e}")
                }
                Err(e) => panic!("cannot run xdotool: {e}"),
            };
            assert!(status.success(), "xdotool mousemove failed: {status}");
            // The move is user input: idle drops below what it was.
            let after = poll_idle(&x, "dropped after the mouse move", |d| d < before);
            println!("child {mode}: ok (idle {before:?} before the move, {after:?} after)");
        }
        "hammer" => {
            // On a server that resets whenever its last client leaves, every query races a
            // reset; an unguarded XOpenDisplay then returns NULL and user-idle crashes.
            // Mid-reset the guard says "unavailable" (the source then counts as closed);
            // what must never happen is a crash, and between resets queries succeed.
            let (mut answered, mut refused) = (0, 0);
            for _ in 0..60 {
                match x.idle_for() {
                    Ok(_) => answered += 1,
                    Err(_) => refused += 1,
                }
            }
            assert!(answered > 0, "no query answered ({refused} refused)");
            println!("child {mode}: ok ({answered} answered, {refused} unavailable)");
        }
        "query" => {
            let idle = x.idle_for().unwrap();
            println!("child {mode}: ok (idle {idle:?})");
        }
        other => panic!("unknown child mode {other}"),
    }
}

#[test]
fn x11_idle_grows_and_a_mouse_move_resets_it() {
    let xvfb = Xvfb::start(None, true);
    let display = xvfb.display();
    x11_server_answers(&display).unwrap();
    // This process's $DISPLAY is not the new server, and user-idle could only query $DISPLAY.
    let e = X11Idle::try_connect_to(&display).unwrap_err();
    assert!(e.contains("$DISPLAY"), "{e}");
    let out = run_child("measure", &display, None);
    eprintln!("{}", out.trim());
}

#[test]
fn repeated_queries_on_a_resetting_server_never_crash() {
    let xvfb = Xvfb::start(None, false);
    let out = run_child("hammer", &xvfb.display(), None);
    eprintln!("{}", out.trim());
}

#[test]
fn a_display_that_wants_a_cookie_is_refused_without_one_and_used_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("Xauthority");
    // The cookie as `xauth add` files it: the local host name, any display number.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let cookie: Vec<u8> = (0..16u8)
        .map(|i| i.wrapping_mul(37) ^ (std::process::id() as u8))
        .collect();
    std::fs::write(
        &auth,
        xauth_entry(256, host.trim().as_bytes(), b"", &cookie),
    )
    .unwrap();
    let xvfb = Xvfb::start(Some(&auth), true);
    let display = xvfb.display();
    // Without the cookie (this process has no XAUTHORITY for it) the server refuses, and
    // the guard says so instead of letting user-idle dereference a NULL display.
    match X11Idle::try_connect_to(&display) {
        Ok(_) => panic!("connected to {display} without its cookie"),
        Err(e) => assert!(e.contains("refused"), "{e}"),
    }
    // With it, the same server is usable.
    run_child("query", &display, Some(&auth));
    let wrong = dir.path().join("wrong");
    std::fs::write(
        &wrong,
        xauth_entry(256, host.trim().as_bytes(), b"", &[0; 16]),
    )
    .unwrap();
    assert!(x11_refused_with(&display, &wrong));
}

/// Runs the child with a wrong cookie; it must fail to connect (not crash, not succeed).
fn x11_refused_with(display: &str, auth: &Path) -> bool {
    let out = child_command("query", display, Some(auth))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The child panics in the test harness (exit 101) with the guard's reason — a crash in
    // Xlib would be a signal instead.
    out.status.code() == Some(101) && stderr.contains("refused")
}

fn xauth_entry(family: u16, address: &[u8], number: &[u8], cookie: &[u8]) -> Vec<u8> {
    let mut b = family.to_be_bytes().to_vec();
    for f in [address, number, b"MIT-MAGIC-COOKIE-1", cookie] {
        b.extend(u16::try_from(f.len()).unwrap().to_be_bytes());
        b.extend(f);
    }
    b
}

/// A display number with no socket and no lock file.
fn unserved_display() -> u32 {
    (1000..60000)
        .map(|n| n + std::process::id() % 1000)
        .find(|n| {
            !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
        })
        .unwrap()
}

#[test]
fn a_display_nobody_serves_is_none_without_crashing() {
    let n = unserved_display();
    let started = Instant::now();
    assert!(X11Idle::connect_to(&format!(":{n}")).is_none());
    let e = X11Idle::try_connect_to(&format!(":{n}")).unwrap_err();
    assert!(e.contains("no X server"), "{e}");
    assert!(X11Idle::connect_to(&format!("unix:{n}.0")).is_none());
    // Nothing listens on 127.0.0.1 here: the TCP form is refused.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    if let Some(tcp) = port.checked_sub(6000) {
        assert!(X11Idle::connect_to(&format!("127.0.0.1:{tcp}")).is_none());
    }
    for garbage in ["", "nonsense", ":abc", "host::0"] {
        assert!(X11Idle::connect_to(garbage).is_none(), "{garbage:?}");
    }
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_socket_that_does_not_speak_x_is_none_within_the_timeout() {
    // Something listens at the display's port but never answers the handshake (a hung or
    // foreign server): the check times out instead of handing it to Xlib.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let Some(n) = port.checked_sub(6000) else {
        panic!("ephemeral port {port} below 6000");
    };
    let hold = thread::spawn(move || {
        let mut held = Vec::new();
        // Accept and hold both connections open, silent.
        for s in listener.incoming().take(2) {
            held.push(s);
        }
        held
    });
    let started = Instant::now();
    let e = X11Idle::try_connect_to(&format!("127.0.0.1:{n}")).unwrap_err();
    assert!(e.contains("handshake"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // One that hangs up at once.
    let quick = TcpListener::bind("127.0.0.1:0").unwrap();
    let qport = quick.local_addr().unwrap().port();
    let closer = thread::spawn(move || {
        if let Some(Ok(s)) = quick.incoming().next() {
            drop(s);
        }
    });
    assert!(X11Idle::connect_to(&format!("127.0.0.1:{}", qport - 6000)).is_none());
    closer.join().unwrap();
    // Release the silent listener's accept loop.
    let _ = std::net::TcpStream::connect(("127.0.0.1", port));
    drop(hold.join().unwrap());
}
