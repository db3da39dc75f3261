//! `metaclaw pause [--for D | --until T]` and `metaclaw resume`: through the running engine
//! (which saves the pause and applies it at once), or straight into the pause file when
//! MetaClaw is not running (it reads the file at start).

use metaclaw_engine::paths::Paths;
use metaclaw_engine::schedule::{offline, parse, text};
use serde_json::json;

use super::scheduler::client;
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn pause(paths: &Paths, duration: Option<&str>, until: Option<&str>) -> Outcome {
    // Read here, in the user's time zone: "18:00" is their 18:00, whatever the engine's.
    let end = parse::pause_end_now(duration, until).map_err(Failure::usage)?;
    let body = match end {
        Some(t) => json!({"until": t.to_string()}),
        None => json!({}),
    };
    let status = match crate::admin_client::running(paths)? {
        Some(_) => client::post(paths, "/api/scheduler/pause", &body)?,
        None => {
            offline::pause(paths, end).map_err(Failure::error)?;
            let config = metaclaw_engine::config::Config::load(paths)?.config;
            offline::status(paths, &config)
        }
    };
    let words = text::render_now(&status);
    output::line(format!("Learning {}.", words.state));
    if !status.running {
        output::line("MetaClaw is not running; the pause is saved and applies when it starts.");
    }
    if end.is_none() {
        output::line("Resume with `metaclaw resume`.");
    }
    Ok(())
}

pub fn resume(paths: &Paths) -> Outcome {
    match crate::admin_client::running(paths)? {
        Some(_) => {
            let status = client::post(paths, "/api/scheduler/resume", &json!({}))?;
            let words = text::render_now(&status);
            output::line(format!("Learning resumed: {}.", words.state));
            output::line(format!("{}.", capitalised(&words.next_window)));
        }
        None => {
            let was = offline::resume(paths).map_err(Failure::error)?;
            output::line(if was {
                "Learning resumed (MetaClaw is not running; the pause is removed)."
            } else {
                "Learning was not paused."
            });
        }
    }
    Ok(())
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
