//! `metaclaw scheduler status | next-window | calendar …`: through the running engine, or
//! computed from the config (sleep hours and the pause file) when MetaClaw is not running.

mod calendar;
pub(crate) mod client;

use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::schedule::{SchedulerStatus, offline, text};
use serde_json::Value;

use crate::cli::SchedulerCommand;
use crate::exit::Outcome;
use crate::output;

pub fn run(paths: &Paths, command: SchedulerCommand) -> Outcome {
    match command {
        SchedulerCommand::Calendar(c) => calendar::run(paths, c),
        SchedulerCommand::Status { json } => status(paths, json),
        SchedulerCommand::NextWindow => next_window(paths),
    }
}

fn status(paths: &Paths, json: bool) -> Outcome {
    let (value, status) = current(paths)?;
    if json {
        output::line(value);
    } else {
        for line in text::status_lines(&status) {
            output::line(line);
        }
    }
    Ok(())
}

fn next_window(paths: &Paths) -> Outcome {
    let (_, status) = current(paths)?;
    output::line(text::render_now(&status).next_window);
    if !status.running {
        output::line(
            "(MetaClaw is not running: from the sleep hours and the pause only; idle and calendar are read only while it runs)",
        );
    }
    Ok(())
}

/// The status from the running engine, else computed here.
fn current(paths: &Paths) -> Result<(Value, SchedulerStatus), crate::exit::Failure> {
    if let Some(c) = crate::admin_client::running(paths)? {
        return client::status(&c);
    }
    let config = Config::load(paths)?.config;
    let status = offline::status(paths, &config);
    let value = serde_json::to_value(&status)?;
    Ok((value, status))
}
