//! Ctrl-C during setup: before anything is written it aborts with nothing written; while a
//! write is in progress it waits for the write to finish; the hidden key prompt handles it
//! itself (it has the terminal in raw mode and must restore echo first). A Ctrl-C that lands
//! after the prompt is printed but before it took the terminal is a signal the prompt never
//! sees: the terminal's saved settings are put back and setup stops, nothing written.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use crate::exit::Failure;
use crate::output;

/// Exit code for an interrupted setup, as shells report a SIGINT.
pub const INTERRUPTED: u8 = 130;

#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Only questions so far (and, announced, the plaintext-key migration).
    Asking = 0,
    /// The hidden prompt owns the terminal; it turns Ctrl-C into an error itself. A signal
    /// here came before it took the terminal (or from the prompt on its way out): the
    /// terminal is restored and setup stops.
    Hidden = 1,
    /// Files are being written: finish first, then stop.
    Writing = 2,
    /// The config is saved; what follows is starting and checking.
    Written = 3,
    /// Already on the way out.
    Aborting = 4,
}

static PHASE: AtomicU8 = AtomicU8::new(Phase::Asking as u8);
static PENDING: AtomicBool = AtomicBool::new(false);

pub fn set(phase: Phase) {
    PHASE.store(phase as u8, Ordering::SeqCst);
}

/// The hidden prompt is about to take the terminal: remember how it is now and turn echo
/// off before its label is printed, so a key typed or pasted the moment the label shows is
/// never echoed (the prompt itself only hides input after printing the label).
pub fn hidden_begins() {
    terminal::save_and_hide();
    set(Phase::Hidden);
}

/// The hidden prompt gave the terminal back: the settings from before it, echo included.
pub fn hidden_ends() {
    set(Phase::Asking);
    terminal::restore();
}

/// After a write: stops here if Ctrl-C came while it ran.
pub fn checkpoint(what_was_written: &str) -> Result<(), Failure> {
    if PENDING.load(Ordering::SeqCst) {
        set(Phase::Aborting);
        return Err(Failure {
            code: INTERRUPTED,
            message: format!("setup interrupted after {what_was_written}"),
        });
    }
    Ok(())
}

/// Takes over SIGINT for the rest of the process; returns once the handler is in place, so
/// the hidden prompt's own SIGINT can never kill the process with echo still off.
pub fn install() {
    let (ready, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            let _ = ready.send(());
            return;
        };
        runtime.block_on(watch(ready));
    });
    let _ = wait.recv();
}

#[cfg(unix)]
async fn watch(ready: std::sync::mpsc::Sender<()>) {
    use tokio::signal::unix::{SignalKind, signal};
    let sigint = signal(SignalKind::interrupt());
    let _ = ready.send(());
    let Ok(mut sigint) = sigint else { return };
    while sigint.recv().await.is_some() {
        interrupted();
    }
}

#[cfg(not(unix))]
async fn watch(ready: std::sync::mpsc::Sender<()>) {
    let _ = ready.send(());
    while tokio::signal::ctrl_c().await.is_ok() {
        interrupted();
    }
}

fn interrupted() {
    let message = match PHASE.load(Ordering::SeqCst) {
        p if p == Phase::Asking as u8 => "setup aborted: nothing was written",
        p if p == Phase::Written as u8 => {
            "setup interrupted: the config is saved; start MetaClaw with `metaclaw start --daemon`"
        }
        p if p == Phase::Writing as u8 => {
            PENDING.store(true, Ordering::SeqCst);
            return;
        }
        p if p == Phase::Hidden as u8 => {
            // Echo may be off: put the terminal back before leaving.
            terminal::restore();
            "setup aborted: nothing was written"
        }
        _ => return,
    };
    output::line("");
    output::error(message);
    std::process::exit(i32::from(INTERRUPTED));
}

/// The controlling terminal's settings around the hidden prompt.
#[cfg(unix)]
mod terminal {
    use std::fs::File;
    use std::sync::{Mutex, PoisonError};

    use nix::sys::termios::{LocalFlags, SetArg, Termios, tcgetattr, tcsetattr};

    static SAVED: Mutex<Option<(File, Termios)>> = Mutex::new(None);

    fn saved() -> std::sync::MutexGuard<'static, Option<(File, Termios)>> {
        SAVED.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn save_and_hide() {
        // The prompt reads the controlling terminal, so that is the one to restore.
        let Ok(tty) = File::options().read(true).write(true).open("/dev/tty") else {
            return;
        };
        let Ok(settings) = tcgetattr(&tty) else {
            return;
        };
        let mut hidden = settings.clone();
        hidden.local_flags.remove(LocalFlags::ECHO);
        hidden.local_flags.insert(LocalFlags::ECHONL);
        let _ = tcsetattr(&tty, SetArg::TCSANOW, &hidden);
        *saved() = Some((tty, settings));
    }

    pub fn restore() {
        if let Some((tty, settings)) = saved().take() {
            let _ = tcsetattr(&tty, SetArg::TCSANOW, &settings);
        }
    }
}

#[cfg(not(unix))]
mod terminal {
    pub fn save_and_hide() {}
    pub fn restore() {}
}
