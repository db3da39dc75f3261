//! The learning-effect benchmark: does a rule the user states once come back in later
//! conversations that need it, and stay out of those that do not? See `bin/learning-bench.rs`.

pub mod config;
pub mod http;
pub mod report;
pub mod run;
pub mod scenario;
pub mod scenario_zh;
