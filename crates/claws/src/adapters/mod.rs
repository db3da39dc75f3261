//! Every agent MetaClaw can connect, by its `claw_type` name.

mod claude_code;
mod copaw;
mod hermes;
mod ironclaw;
mod nanoclaw;
mod nemoclaw;
mod none;
mod openclaw;
mod picoclaw;
mod zeroclaw;

use crate::adapter::Adapter;

pub use openclaw::config_file as openclaw_config_file;

/// All adapters, in the order they are offered (`none` last).
pub fn all() -> Vec<Box<dyn Adapter>> {
    vec![
        Box::new(openclaw::OpenClaw),
        Box::new(copaw::CoPaw),
        Box::new(ironclaw::IronClaw),
        Box::new(picoclaw::PicoClaw),
        Box::new(zeroclaw::ZeroClaw),
        Box::new(nanoclaw::NanoClaw),
        Box::new(nemoclaw::NemoClaw),
        Box::new(hermes::Hermes),
        Box::new(claude_code::ClaudeCode),
        Box::new(none::NoAgent),
    ]
}

/// The adapter named `name` (`claw_type`): how the agent connects by default.
pub fn by_name(name: &str) -> Option<Box<dyn Adapter>> {
    all().into_iter().find(|a| a.name() == name)
}

/// `name` connected as a plugin, for an agent that has one: its default adapter when that
/// is a plugin already (Claude Code), else the plugin beside its proxy connection (OpenClaw,
/// Hermes).
pub fn plugin_of(name: &str) -> Option<Box<dyn Adapter>> {
    match name {
        "openclaw" => Some(Box::new(openclaw::OpenClawPlugin)),
        "hermes" => Some(Box::new(hermes::HermesPlugin)),
        _ => by_name(name).filter(|a| a.mode() == crate::target::Mode::Plugin),
    }
}
