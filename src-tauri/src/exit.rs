//! Exit codes (docs/command-line.md): 0 ok, 1 error, 2 usage, 3 not running.

use std::fmt;

#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

pub const ERROR: u8 = 1;
pub const USAGE: u8 = 2;
pub const NOT_RUNNING: u8 = 3;

impl Failure {
    pub fn error(message: impl fmt::Display) -> Self {
        Failure {
            code: ERROR,
            message: message.to_string(),
        }
    }

    pub fn usage(message: impl fmt::Display) -> Self {
        Failure {
            code: USAGE,
            message: message.to_string(),
        }
    }

    pub fn not_running() -> Self {
        Failure {
            code: NOT_RUNNING,
            message: "MetaClaw is not running (start it with `metaclaw start --daemon`)".into(),
        }
    }
}

impl<E: std::error::Error + 'static> From<E> for Failure {
    fn from(e: E) -> Self {
        // The reader of our output went away (`metaclaw logs | head`): nothing went wrong,
        // so end quietly with success, as standard tools do.
        let io = (&e as &dyn std::error::Error).downcast_ref::<std::io::Error>();
        if io.is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
            return Failure {
                code: 0,
                message: String::new(),
            };
        }
        Failure::error(e)
    }
}

pub type Outcome = Result<(), Failure>;
