//! `metaclaw scheduler calendar connect | disconnect | status`.

use metaclaw_engine::paths::Paths;

use crate::cli::CalendarCommand;
use crate::exit::{Failure, Outcome};

pub fn run(_paths: &Paths, _command: CalendarCommand) -> Outcome {
    Err(Failure::error("PLACEHOLDER"))
}
