//! `tracing` setup. The engine logs to stderr and to `logs/metaclaw.<date>.log` (rotated
//! daily); other commands print warnings to stderr only.

use std::io::IsTerminal;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry, fmt};

use crate::paths::Paths;

/// `json` switches both outputs to one JSON object per line.
pub const LOG_FORMAT_ENV: &str = "METACLAW_LOG_FORMAT";

#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[error("cannot open the log file in {dir}: {message}")]
    File { dir: String, message: String },
    #[error("logging is already initialised in this process")]
    AlreadyInitialised,
}

/// Keeps the background log writer running; dropping it flushes what is buffered.
#[must_use = "dropping the guard stops file logging"]
#[derive(Debug)]
pub struct LogGuard {
    _file: WorkerGuard,
}

/// Lines waiting for the log file.
const LOG_QUEUE_LINES: usize = 8_192;

type BoxedLayer = Box<dyn Layer<Registry> + Send + Sync>;

/// For `metaclaw start` and the app: level from `RUST_LOG`, else `info`.
pub fn init_server_logging(paths: &Paths) -> Result<LogGuard, LoggingError> {
    let file_error = |message: String| LoggingError::File {
        dir: paths.logs.display().to_string(),
        message,
    };
    std::fs::create_dir_all(&paths.logs).map_err(|e| file_error(e.to_string()))?;
    let appender = Builder::new()
        .rotation(Rotation::DAILY)
        .filename_prefix("metaclaw")
        .filename_suffix("log")
        .build(&paths.logs)
        .map_err(|e| file_error(e.to_string()))?;
    // The writer's queue is allocated whole and touched as it fills; the default of 128,000
    // lines is 4 MB that a burst leaves resident. 8,192 lines absorb any burst the file
    // cannot take at once; beyond that lines are dropped, never the proxy slowed.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .lossy(true)
        .finish(appender);
    let json = json_format();
    let layers: Vec<BoxedLayer> = vec![
        stderr_layer(json),
        if json {
            fmt::layer().json().with_writer(writer).boxed()
        } else {
            fmt::layer().with_ansi(false).with_writer(writer).boxed()
        },
    ];
    tracing_subscriber::registry()
        .with(layers)
        .with(filter("info"))
        .try_init()
        .map_err(|_| LoggingError::AlreadyInitialised)?;
    Ok(LogGuard { _file: guard })
}

/// For short-lived commands: warnings and errors to stderr, unless `RUST_LOG` says otherwise.
pub fn init_cli_logging() -> Result<(), LoggingError> {
    let layer: BoxedLayer = if json_format() {
        fmt::layer().json().with_writer(std::io::stderr).boxed()
    } else {
        fmt::layer()
            .without_time()
            .with_target(false)
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .boxed()
    };
    tracing_subscriber::registry()
        .with(layer)
        .with(filter("warn"))
        .try_init()
        .map_err(|_| LoggingError::AlreadyInitialised)
}

fn stderr_layer(json: bool) -> BoxedLayer {
    if json {
        fmt::layer().json().with_writer(std::io::stderr).boxed()
    } else {
        fmt::layer()
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .boxed()
    }
}

fn filter(default: &str) -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default))
}

fn json_format() -> bool {
    std::env::var(LOG_FORMAT_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("json"))
}

/// The log file being written: daily rotation names files `metaclaw.YYYY-MM-DD.log` and the
/// newest one is current. `None` when there is none yet (or the directory is unreadable).
pub fn newest_log(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("metaclaw.") && name.ends_with(".log")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    files.pop().map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The only test that installs the global subscriber.
    #[test]
    fn server_logging_writes_the_daily_file() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let paths = Paths::new(dir.path())?;
        let guard = init_server_logging(&paths)?;
        tracing::warn!(marker = "log-file-check", "written to the file");
        drop(guard);
        let mut found = false;
        for entry in std::fs::read_dir(&paths.logs)? {
            let path = entry?.path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            assert!(
                name.starts_with("metaclaw.") && name.ends_with(".log"),
                "{name}"
            );
            found |= std::fs::read_to_string(&path)?.contains("log-file-check");
        }
        assert!(found);
        assert!(matches!(
            init_cli_logging(),
            Err(LoggingError::AlreadyInitialised)
        ));
        Ok(())
    }
}
