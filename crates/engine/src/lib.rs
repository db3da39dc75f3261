//! placeholder
pub mod config;
pub mod logging;
pub mod paths;
pub mod recorder;
pub mod runfiles;
pub mod secrets;
