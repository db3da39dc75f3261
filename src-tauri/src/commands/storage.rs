//! `metaclaw storage [prune] [--json]`: through the running engine, or on the database
//! directly when MetaClaw is not running.

use std::time::Duration;

use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::storage::{self, Readers, RetentionRun, StorageReport, Trigger};
use serde_json::Value;

use crate::admin_client::{AdminClient, runtime};
use crate::cli::{StorageArgs, StorageCommand};
use crate::exit::{Failure, Outcome};
use crate::output;

/// A rewrite of a database of gigabytes takes minutes.
const PRUNE_TIMEOUT: Duration = Duration::from_secs(3600);

pub fn run(paths: &Paths, args: StorageArgs) -> Outcome {
    match args.command {
        None => report(paths, args.json),
        Some(StorageCommand::Prune) => prune(paths, args.json),
    }
}

fn report(paths: &Paths, json: bool) -> Outcome {
    let value = match crate::admin_client::running(paths)? {
        Some(client) => runtime()?.block_on(client.get("/api/storage"))?,
        None => {
            no_database(paths)?;
            let config = Config::load(paths)?.config;
            let report = storage::measure(&paths.db, &config.storage, storage::now_ms())
                .map_err(|e| Failure::error(format!("cannot measure the database: {e}")))?;
            serde_json::to_value(report)?
        }
    };
    if json {
        output::line(value);
        return Ok(());
    }
    let report: StorageReport = parse(value)?;
    for line in storage::lines(&report, storage::now_ms()) {
        output::line(line);
    }
    Ok(())
}

fn prune(paths: &Paths, json: bool) -> Outcome {
    let value = match crate::admin_client::running(paths)? {
        Some(client) => asked(&client)?,
        None => {
            no_database(paths)?;
            let config = Config::load(paths)?.config;
            let run = storage::retention::run(
                &paths.db,
                &config.storage,
                &readers(&config),
                storage::now_ms(),
                Trigger::Asked,
                // Nothing else writes while MetaClaw is not running.
                &storage::Yield {
                    between_batches: std::sync::Arc::new(|| false),
                    during_rewrite: std::sync::Arc::new(|| false),
                },
            );
            storage::retention::remember(&paths.db, &run)
                .map_err(|e| Failure::error(format!("cannot record the run: {e}")))?;
            serde_json::to_value(run)?
        }
    };
    let run: RetentionRun = parse(value.clone())?;
    if json {
        output::line(value);
    } else {
        output::line(format!(
            "retention: {}",
            storage::last_run_words(Some(&run), storage::now_ms())
        ));
        output::line(format!(
            "database: {} before, {} now",
            storage::size(run.file_bytes_before),
            storage::size(run.file_bytes_after)
        ));
    }
    match run.error {
        Some(e) => Err(Failure::error(format!("retention failed part way: {e}"))),
        None => Ok(()),
    }
}

fn asked(client: &AdminClient) -> Result<Value, Failure> {
    let (status, value) =
        runtime()?.block_on(client.post_answer("/api/storage/retention", PRUNE_TIMEOUT))?;
    if !(200..300).contains(&status) {
        let msg = value
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("unknown error");
        return Err(Failure::error(format!("MetaClaw answered {status}: {msg}")));
    }
    Ok(value)
}

/// The learning jobs the configuration turns on (the running engine knows better: a job
/// without a model is off).
fn readers(config: &Config) -> Readers {
    let mut readers = Readers::default();
    if config.skills.enabled && config.skills.auto_evolve {
        readers.session_marks.push(storage::EVOLUTION_MARK.into());
    }
    if config.memory.enabled && config.memory.auto_extract {
        readers.session_marks.push(storage::EXTRACTION_MARK.into());
    }
    readers
}

fn no_database(paths: &Paths) -> Result<(), Failure> {
    if paths.db.exists() {
        return Ok(());
    }
    Err(Failure::error(format!(
        "no database yet at {} (MetaClaw creates it at its first start)",
        paths.db.display()
    )))
}

fn parse<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, Failure> {
    serde_json::from_value(value)
        .map_err(|e| Failure::error(format!("unexpected answer from MetaClaw: {e}")))
}
