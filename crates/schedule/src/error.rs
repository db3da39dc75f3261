//! What can go wrong when configuring sleep hours or reading and writing the pause.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("{which} time {value:?} is not a valid time: use HH:MM between 00:00 and 23:59")]
    InvalidTime { which: &'static str, value: String },

    #[error(
        "sleep start and end are both {at}: the sleep window would be empty; \
         set two different times (for example 23:00 and 07:00)"
    )]
    EmptySleepWindow { at: String },

    #[error("cannot read the pause file {}: {source}", path.display())]
    PauseRead {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error(
        "the pause file {} is corrupt ({source}); fix or delete it, then pause or resume again",
        path.display()
    )]
    PauseCorrupt {
        path: PathBuf,
        source: serde_json::Error,
    },

    #[error("cannot write the pause file {}: {source}", path.display())]
    PauseWrite {
        path: PathBuf,
        source: std::io::Error,
    },
}
