//! LLM providers for the setup window: the presets it offers and the connection test behind
//! its "Test connection" button.

mod presets;
mod probe;

pub use presets::{PRESETS, Preset, PresetView, attribution_headers, configured, find, same_base};
pub use probe::{
    Check, Connected, ErrorKind, MODELS_CAP, PROBE_TIMEOUT, ProbeError, Report, Target, host_of,
    probe, test_connection,
};

#[cfg(test)]
mod probe_tests;
