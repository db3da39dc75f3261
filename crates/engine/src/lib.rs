//! Composition: config, secrets, the recorder, and the proxy wired together into one engine
//! with an admin API. The CLI and the desktop shell both drive it.

pub mod admin;
pub mod agents;
pub mod calendar;
pub mod clock;
pub mod config;
pub mod effect;
pub mod embeddings;
pub mod events;
pub mod learned_turns;
pub mod llm;
pub mod logging;
pub mod memory;
pub mod paths;
pub mod providers;
pub mod recorder;
pub mod rl;
pub mod run;
pub mod runfiles;
pub mod schedule;
pub mod seams;
pub mod secrets;
pub mod setup;
pub mod skills;
pub mod storage;
pub mod store_access;
pub mod supervise;
pub mod ui;
pub mod updates;
pub mod wechat;
pub mod wiring;
