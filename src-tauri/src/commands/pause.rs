//! `metaclaw pause [--for D | --until T]` and `metaclaw resume`.

use metaclaw_engine::paths::Paths;

use crate::exit::{Failure, Outcome};

pub fn pause(_paths: &Paths, _duration: Option<&str>, _until: Option<&str>) -> Outcome {
    Err(Failure::error("PLACEHOLDER"))
}

pub fn resume(_paths: &Paths) -> Outcome {
    Err(Failure::error("PLACEHOLDER"))
}
