//! `prices:` — what the user's provider charges, per model, in US dollars per million tokens.
//! It overrides the built-in table (`crate::providers::prices`) for the models it names; a
//! model in neither is shown as tokens only, never given a guessed price.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

/// One model's prices, US dollars per million tokens. A cache price left out is billed at
/// the input price: what a provider without a cache discount (or surcharge) charges.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    #[serde(deserialize_with = "per_million")]
    pub input: f64,
    #[serde(deserialize_with = "per_million")]
    pub output: f64,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_per_million"
    )]
    pub cache_read: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_per_million"
    )]
    pub cache_write: Option<f64>,
}

/// Model name (as the agent or `llm.model_id` names it) to its prices.
pub type Prices = BTreeMap<String, Price>;

fn per_million<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(de::Error::custom(
            "a price in US dollars per million tokens (a number, 0 or more)",
        ))
    }
}

fn optional_per_million<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    per_million(d).map(Some)
}
