//! One file per command.

pub mod agent;
pub mod config;
pub mod daemon;
pub mod hook;
pub mod logs;
pub mod memory;
pub mod models;
pub mod pause;
pub mod scheduler;
pub mod setup;
pub mod skills;
pub mod start;
pub mod status;
pub mod stop;
pub mod storage;
pub mod train;
pub mod uninstall;
pub mod update;
pub mod wechat_login;
