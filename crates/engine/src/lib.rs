//! placeholder
pub mod config;
pub mod paths;
pub mod recorder;
pub mod secrets;
