//! LLM providers for the setup window: the presets it offers and the connection test behind
//! its "Test connection" button.

mod cost_report;
mod presets;
mod prices;
mod probe;
mod text;

pub use cost_report::{
    CostReport, DayCost, LearningCost, ModelCost, PurposeCost, day_cost, report as cost_report,
};
pub use presets::{PRESETS, Preset, PresetView, attribution_headers, configured, find, same_base};
pub use prices::{PriceSource, Tokens, built_in, cost_usd, price_for};
pub use probe::{
    Check, Connected, ErrorKind, MODELS_CAP, PROBE_TIMEOUT, ProbeError, Report, Target,
    key_check_path, probe, test_connection,
};
pub use text::host_of;

#[cfg(test)]
mod probe_tests;
