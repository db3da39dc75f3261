//! Connecting agents to MetaClaw: one adapter per agent says where its config lives, in
//! which format, and which keys point it at an LLM; a shared driver backs every file up,
//! applies the change (keeping every other setting, comment and the file's format),
//! restarts the agent when something changed, and restores the original exactly on
//! disconnect.

pub mod adapter;
pub mod adapters;
pub mod backup;
pub mod doc;
pub mod driver;
pub mod env;
pub mod error;
pub mod formats;
pub mod packages;
pub mod target;
pub mod verify;
pub mod wechat;

pub use adapter::{Adapter, Edit};
pub use doc::{Doc, Format};
pub use driver::{
    Change, Connected, Disconnected, Preview, Restart, Status, connect, disconnect, preview,
    reload, status,
};
pub use env::{CommandOutput, Env, Runner, SystemRunner};
pub use error::ClawError;
pub use target::{Endpoint, Mode, PluginHost, Protocol, Target};
pub use verify::{Verified, VerifyError, verify};
