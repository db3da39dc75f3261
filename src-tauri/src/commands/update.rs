//! `metaclaw update check [--json]`: looks for a newer version now — through the running
//! engine (its status then shows the result), or directly when MetaClaw is not running.
//! Nothing is downloaded or installed: the answer says how to.

use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::updates::{self, UpdateStatus};

use crate::admin_client::runtime;
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn check(paths: &Paths, json: bool) -> Outcome {
    let status: UpdateStatus = match crate::admin_client::running(paths)? {
        Some(client) => {
            serde_json::from_value(runtime()?.block_on(client.post("/api/updates/check"))?)?
        }
        None => {
            let config = Config::load(paths)?.config;
            let client = reqwest::Client::builder()
                .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
                .build()?;
            let sources = updates::sources(&config.updates);
            let outcome = runtime()?.block_on(metaclaw_updates::check(&client, &sources));
            UpdateStatus::found(&config.updates, outcome)
        }
    };
    if json {
        output::line(serde_json::to_value(&status)?);
    } else {
        output::line(
            status
                .line
                .clone()
                .unwrap_or_else(|| format!("MetaClaw {} is the newest", status.current)),
        );
    }
    match status.error {
        // Said already (text or JSON); the exit code tells scripts it could not tell.
        Some(_) => Err(Failure {
            code: crate::exit::ERROR,
            message: String::new(),
        }),
        None => Ok(()),
    }
}
