//! `metaclaw scheduler calendar connect | disconnect | status`.

use std::sync::Arc;

use metaclaw_engine::calendar::{self as cal, BusyBlock, Present};
use metaclaw_engine::config::{self, Config};
use metaclaw_engine::paths::Paths;
use metaclaw_engine::secrets::{Backend, SecretStore};

use crate::admin_client::runtime;
use crate::cli::CalendarCommand;
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn run(paths: &Paths, command: CalendarCommand) -> Outcome {
    let loaded = Config::load(paths)?;
    let store = SecretStore::open(paths)?.with_legacy(loaded.legacy_secrets);
    let config = loaded.config;
    match command {
        CalendarCommand::Connect { no_browser } => connect(paths, &config, &store, no_browser),
        CalendarCommand::Disconnect => disconnect(paths, &store),
        CalendarCommand::Status => status(paths, &config, &store),
    }
}

fn connect(paths: &Paths, config: &Config, store: &SecretStore, no_browser: bool) -> Outcome {
    let c = &config.scheduler.calendar;
    cal::credentials_path(c, paths).map_err(Failure::usage)?;
    output::line(
        "Sign in with Google (read-only calendar access). The sign-in page returns to \
         http://localhost on this machine, so open it in a browser here.",
    );
    let present = if no_browser {
        Present::Show(Arc::new(|url: &str| {
            output::line("Open this address in your browser:");
            output::line(url);
        }))
    } else {
        Present::Browser {
            show: Arc::new(|url: &str| {
                output::line("Opening your browser. If it does not open, visit:");
                output::line(url);
            }),
        }
    };
    let info = runtime()?
        .block_on(cal::connect(config, paths, store, present))
        .map_err(Failure::error)?;
    output::line(format!(
        "Connected to Google Calendar: the token is in the {}.",
        backend_name(store)
    ));
    output::line(format!(
        "Calendars read: {} ({} busy block{} in the next 24 hours).",
        info.calendars.join(", "),
        info.busy_blocks_next_24h,
        if info.busy_blocks_next_24h == 1 {
            ""
        } else {
            "s"
        }
    ));
    if !c.enabled {
        config::set(paths, "scheduler.calendar.enabled", "true", store)?;
        output::line("Set scheduler.calendar.enabled = true");
    }
    if running(paths) {
        output::line(
            "MetaClaw is running: restart it to use the calendar (metaclaw stop && metaclaw start --daemon).",
        );
    }
    Ok(())
}

fn disconnect(paths: &Paths, store: &SecretStore) -> Outcome {
    let deleted = cal::disconnect(store).map_err(Failure::error)?;
    if deleted {
        output::line(format!(
            "Disconnected: the Google token was deleted from the {}.",
            backend_name(store)
        ));
        output::line(
            "To revoke MetaClaw's access at Google as well: https://myaccount.google.com/permissions",
        );
        if running(paths) {
            output::line("MetaClaw is running: restart it to stop reading the calendar.");
        }
    } else {
        output::line("No Google token was stored.");
    }
    Ok(())
}

fn status(paths: &Paths, config: &Config, store: &SecretStore) -> Outcome {
    let c = &config.scheduler.calendar;
    // The daemon would import a legacy token file at start; so does status.
    cal::import_legacy(c, paths, &cal::KeychainTokens::new(store.clone()));
    let connected = cal::is_connected(store).map_err(Failure::error)?;
    output::line(format!(
        "Google Calendar: {}",
        if connected {
            format!("connected (token in the {})", backend_name(store))
        } else {
            "not connected (metaclaw scheduler calendar connect)".to_owned()
        }
    ));
    output::line(format!(
        "  enabled:      {}",
        if c.enabled { "yes" } else { "no" }
    ));
    output::line(format!(
        "  credentials:  {}",
        match cal::credentials_path(c, paths) {
            Ok(p) => p.display().to_string(),
            Err(_) => "not set (scheduler.calendar.credentials_path)".to_owned(),
        }
    ));
    output::line(format!("  calendars:    {}", cal::calendars(c).join(", ")));
    output::line(format!("  polled every: {} min", c.poll_minutes.max(1)));
    if !connected || cal::credentials_path(c, paths).is_err() {
        return Ok(());
    }
    match runtime()?.block_on(cal::fetch_busy(config, paths, store)) {
        Ok(blocks) if blocks.is_empty() => {
            output::line("  next 24 hours: no meetings that open a window");
            Ok(())
        }
        Ok(blocks) => {
            output::line("  next 24 hours (meetings that open a window):");
            for b in &blocks {
                output::line(describe(b));
            }
            Ok(())
        }
        Err(e) => {
            output::line(format!("  cannot read the calendar: {e}"));
            Err(Failure {
                code: crate::exit::ERROR,
                message: String::new(),
            })
        }
    }
}

fn describe(b: &BusyBlock) -> String {
    let titles: Vec<&str> = b
        .titles
        .iter()
        .map(String::as_str)
        .filter(|t| !t.is_empty())
        .collect();
    format!(
        "    {} – {}  {}",
        output::local_time(b.start.as_millisecond()),
        output::local_time(b.end.as_millisecond()),
        if titles.is_empty() {
            "(busy)".to_owned()
        } else {
            titles.join(", ")
        }
    )
}

fn backend_name(store: &SecretStore) -> &'static str {
    match store.backend() {
        Backend::Keychain => "keychain",
        Backend::File => "secrets file",
    }
}

fn running(paths: &Paths) -> bool {
    metaclaw_engine::runfiles::RunInfo::read(paths)
        .ok()
        .flatten()
        .is_some_and(|i| i.is_alive())
}
