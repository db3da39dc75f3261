//! When the engine cannot start (the port held by another program, a config that cannot be
//! read, a database that cannot be opened…), the desktop app says so where a desktop user
//! looks: a native dialog with the reason and what to do (for a busy port: which program
//! holds it, and a button to use a free one), plus a notification when it started hidden in
//! the tray. It exits (non-zero) only once the dialog is closed.
//!
//! The dialog is GTK's own, shown before the app's event loop exists: no window, tray or
//! webview is needed to explain why there will be none.

use metaclaw_engine::paths::Paths;
use metaclaw_engine::run::EngineError;

use super::port_holder;

/// The dialog's title, whatever went wrong (what a test or a window list finds it by).
pub const TITLE: &str = "MetaClaw cannot start";
/// How far above a busy port to look for a free one.
const PORTS_TRIED: u16 = 100;

/// What went wrong, in the dialog's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// One line: what happened.
    pub text: String,
    /// The reason and what to do.
    pub detail: String,
    /// A free port to offer instead of a busy one.
    pub offer_port: Option<u16>,
}

/// What the user chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    UsePort(u16),
    Quit,
}

impl Problem {
    pub fn of(error: &EngineError, paths: &Paths) -> Problem {
        match error {
            EngineError::PortBusy { port, .. } => {
                let who = match port_holder::holder(*port) {
                    Some(h) if h.pid == std::process::id() => "This program".to_owned(),
                    Some(h) => format!("Another program, {} (PID {}),", h.name, h.pid),
                    None => "Another program".to_owned(),
                };
                let offer_port = free_port_above(*port);
                let instead = match offer_port {
                    Some(p) => format!(
                        "Use port {p} instead (MetaClaw writes it to its settings and points your connected agents at it), or stop that program and start MetaClaw again."
                    ),
                    None => "Stop that program and start MetaClaw again, or set another port with `metaclaw config set proxy.port N`.".to_owned(),
                };
                Problem {
                    text: format!("Port {port} is already in use"),
                    detail: format!(
                        "{who} listens on port {port}, where MetaClaw's proxy goes.\n\n{instead}"
                    ),
                    offer_port,
                }
            }
            EngineError::Config(e) => Problem {
                text: "MetaClaw's settings cannot be read".into(),
                detail: format!(
                    "{e}\n\nFix {} (or move it away to start from the defaults), then start MetaClaw again.",
                    paths.config.display()
                ),
                offer_port: None,
            },
            EngineError::Recorder(e) => Problem {
                text: "MetaClaw's database cannot be opened".into(),
                detail: format!(
                    "{e}\n\nCheck that the disk has room and that {} is yours and writable, then start MetaClaw again. Nothing in it was changed.",
                    paths.db.display()
                ),
                offer_port: None,
            },
            other => Problem {
                text: TITLE.into(),
                detail: format!(
                    "{other}\n\nThe log in {} may say more.",
                    paths.logs.display()
                ),
                offer_port: None,
            },
        }
    }

    /// MetaClaw's own folder cannot be made or written.
    pub fn no_home(why: &str, paths: &Paths) -> Problem {
        Problem {
            text: "MetaClaw's folder cannot be written".into(),
            detail: format!(
                "{why}\n\nCheck that {} is yours and writable and that the disk has room (or set METACLAW_HOME to another folder), then start MetaClaw again.",
                paths.home.display()
            ),
            offer_port: None,
        }
    }

    /// Another engine runs for this home and could not be stopped.
    pub fn running_engine(why: &str) -> Problem {
        Problem {
            text: "Another MetaClaw is running and could not be stopped".into(),
            detail: format!(
                "{why}\n\nStop it (`metaclaw stop`, or end its process), then start MetaClaw again."
            ),
            offer_port: None,
        }
    }

    /// The notification's body: the whole story on one screen.
    pub fn note(&self) -> String {
        format!("{}. {}", self.text, self.detail.replace("\n\n", " "))
    }
}

/// The first port above `port` nobody listens on (loopback).
fn free_port_above(port: u16) -> Option<u16> {
    (1..=PORTS_TRIED)
        .filter_map(|step| port.checked_add(step))
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
}

/// Shows the dialog and waits for the user's answer.
#[cfg(target_os = "linux")]
pub fn ask(problem: &Problem) -> Choice {
    use gtk::prelude::*;
    if let Err(e) = gtk::init() {
        tracing::warn!("cannot show the error dialog: {e}");
        return Choice::Quit;
    }
    let dialog = gtk::MessageDialog::new(
        None::<&gtk::Window>,
        gtk::DialogFlags::MODAL,
        gtk::MessageType::Error,
        gtk::ButtonsType::None,
        &problem.text,
    );
    dialog.set_title(TITLE);
    dialog.set_secondary_text(Some(&problem.detail));
    dialog.set_position(gtk::WindowPosition::Center);
    dialog.set_keep_above(true);
    if let Some(port) = problem.offer_port {
        dialog.add_button(&format!("Use port {port}"), gtk::ResponseType::Accept);
    }
    dialog.add_button("Quit", gtk::ResponseType::Close);
    dialog.set_default_response(if problem.offer_port.is_some() {
        gtk::ResponseType::Accept
    } else {
        gtk::ResponseType::Close
    });
    let response = dialog.run();
    dialog.close();
    // Let the dialog go away before anything else draws.
    while gtk::events_pending() {
        gtk::main_iteration();
    }
    match (response, problem.offer_port) {
        (gtk::ResponseType::Accept, Some(port)) => Choice::UsePort(port),
        _ => Choice::Quit,
    }
}

/// Elsewhere the reason goes to the notification and the terminal only.
#[cfg(not(target_os = "linux"))]
pub fn ask(problem: &Problem) -> Choice {
    crate::output::error(format!("{}: {}", problem.text, problem.detail));
    Choice::Quit
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_busy_port_names_its_holder_and_offers_a_free_one() {
        let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = held.local_addr().unwrap().port();
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::new(dir.path()).unwrap();
        let p = Problem::of(
            &EngineError::PortBusy {
                port,
                message: "in use".into(),
            },
            &paths,
        );
        assert_eq!(p.text, format!("Port {port} is already in use"));
        assert!(p.detail.starts_with("This program listens"), "{}", p.detail);
        let offered = p.offer_port.unwrap();
        assert!(offered > port);
        assert!(std::net::TcpListener::bind(("127.0.0.1", offered)).is_ok());
        assert!(p.note().contains(&format!("Use port {offered} instead")));
    }

    #[test]
    fn a_config_error_says_which_file_to_fix() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::new(dir.path()).unwrap();
        std::fs::write(&paths.config, "proxy: [").unwrap();
        let e = metaclaw_engine::config::Config::load(&paths).unwrap_err();
        let p = Problem::of(&EngineError::Config(e), &paths);
        assert_eq!(p.text, "MetaClaw's settings cannot be read");
        assert!(p.detail.contains(&paths.config.display().to_string()));
        assert_eq!(p.offer_port, None);
    }
}
