//! `metaclaw scheduler status | next-window | calendar …`.

mod calendar;

use metaclaw_engine::paths::Paths;

use crate::cli::SchedulerCommand;
use crate::exit::{Failure, Outcome};

pub fn run(paths: &Paths, command: SchedulerCommand) -> Outcome {
    match command {
        SchedulerCommand::Calendar(c) => calendar::run(paths, c),
        _ => Err(Failure::error("PLACEHOLDER")),
    }
}
