//! What a turn costs: tokens times the model's price, from `prices:` in the config or the
//! built-in list of the presets' models. A model in neither has no price, and its turns are
//! shown as tokens only.

use crate::config::{Price, Prices};

/// Provider list prices in US dollars per million tokens (standard tier, prompt-cache
/// reads and five-minute cache writes where the provider bills them apart), as published
/// when this list was written. Only models whose price is published flat (no tiers by prompt
/// length or region) are listed; providers change them, and `prices:` wins.
const BUILT_IN: &[(&str, Price)] = &[
    ("gpt-4o", p(2.50, 10.00, Some(1.25), None)),
    ("gpt-4o-mini", p(0.15, 0.60, Some(0.075), None)),
    ("gpt-4.1", p(2.00, 8.00, Some(0.50), None)),
    ("gpt-4.1-mini", p(0.40, 1.60, Some(0.10), None)),
    ("gpt-4.1-nano", p(0.10, 0.40, Some(0.025), None)),
    ("gpt-5", p(1.25, 10.00, Some(0.125), None)),
    ("gpt-5-mini", p(0.25, 2.00, Some(0.025), None)),
    ("gpt-5-nano", p(0.05, 0.40, Some(0.005), None)),
    ("o3", p(2.00, 8.00, Some(0.50), None)),
    ("o4-mini", p(1.10, 4.40, Some(0.275), None)),
    ("claude-sonnet-4", p(3.00, 15.00, Some(0.30), Some(3.75))),
    ("claude-sonnet-4-5", p(3.00, 15.00, Some(0.30), Some(3.75))),
    ("claude-sonnet-4-6", p(3.00, 15.00, Some(0.30), Some(3.75))),
    ("claude-opus-4-1", p(15.00, 75.00, Some(1.50), Some(18.75))),
    ("claude-opus-4-5", p(5.00, 25.00, Some(0.50), Some(6.25))),
    ("claude-haiku-4-5", p(1.00, 5.00, Some(0.10), Some(1.25))),
    ("claude-3-5-haiku", p(0.80, 4.00, Some(0.08), Some(1.00))),
];

const fn p(input: f64, output: f64, cache_read: Option<f64>, cache_write: Option<f64>) -> Price {
    Price {
        input,
        output,
        cache_read,
        cache_write,
    }
}

/// Where a price came from, for the user to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceSource {
    Config,
    BuiltIn,
}

/// Tokens of one call, in the recorded convention: `input` is the whole prompt, cache reads
/// and writes included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

/// The price of `model`: the config's entry for it (exact name, then without a
/// `vendor/` prefix, case-insensitive), else the built-in one. A dated snapshot
/// (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`, `…-latest`) takes its model's price;
/// nothing else is inferred: `gpt-4o-mini` is never priced as `gpt-4o`, nor a newer
/// `claude-sonnet-4-7` as `claude-sonnet-4`.
pub fn price_for(configured: &Prices, model: &str) -> Option<(Price, PriceSource)> {
    let model = model.trim();
    let bare = model.rsplit('/').next().unwrap_or(model);
    let from_config = configured
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(model))
        .or_else(|| {
            configured
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(bare))
        })
        .map(|(_, price)| *price);
    if let Some(price) = from_config {
        return Some((price, PriceSource::Config));
    }
    let bare = bare.to_ascii_lowercase();
    BUILT_IN
        .iter()
        .filter(|(name, _)| extends(&bare, name))
        .max_by_key(|(name, _)| name.len())
        .map(|(_, price)| (*price, PriceSource::BuiltIn))
}

/// `model` is `name`, or `name` followed by a snapshot date (`-20250929`, `-2024-08-06`)
/// or `-latest`.
fn extends(model: &str, name: &str) -> bool {
    match model.strip_prefix(name) {
        Some("") => true,
        Some(rest) => rest.strip_prefix('-').is_some_and(|rest| {
            let first = rest.split('-').next().unwrap_or("");
            rest == "latest" || (first.len() >= 4 && first.chars().all(|c| c.is_ascii_digit()))
        }),
        None => false,
    }
}

/// US dollars for `tokens` at `price`. Cache reads and writes are billed at their own
/// prices (the input price when the model has none); the rest of the prompt at the input
/// price.
pub fn cost_usd(price: &Price, tokens: Tokens) -> f64 {
    let cached = tokens.cache_read.saturating_add(tokens.cache_write);
    let uncached = tokens.input.saturating_sub(cached);
    let per_token = |n: u64, usd_per_million: f64| n as f64 * usd_per_million / 1e6;
    per_token(uncached, price.input)
        + per_token(tokens.cache_read, price.cache_read.unwrap_or(price.input))
        + per_token(tokens.cache_write, price.cache_write.unwrap_or(price.input))
        + per_token(tokens.output, price.output)
}

/// The built-in list, for the settings page and `/api` (name, price).
pub fn built_in() -> impl Iterator<Item = (&'static str, Price)> {
    BUILT_IN.iter().map(|(name, price)| (*name, *price))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn dated_and_vendor_names_find_their_model_but_not_a_sibling() {
        let none = Prices::new();
        let input = |m: &str| price_for(&none, m).map(|(p, _)| p.input);
        assert_eq!(input("gpt-4o"), Some(2.50));
        assert_eq!(input("gpt-4o-2024-08-06"), Some(2.50));
        assert_eq!(input("gpt-4o-mini"), Some(0.15));
        assert_eq!(input("openai/gpt-4o-mini-2024-07-18"), Some(0.15));
        assert_eq!(input("claude-sonnet-4-5-20250929"), Some(3.00));
        assert_eq!(input("claude-opus-4-5"), Some(5.00));
        assert_eq!(input("GPT-4.1"), Some(2.00));
        // Unknown, or only a prefix that is not a version of a listed model: no price.
        assert_eq!(input("gpt-4o-audio-preview"), None);
        assert_eq!(input("claude-opus-4-6"), None);
        assert_eq!(input("claude-sonnet-4-7"), None);
        assert_eq!(input("claude-sonnet-4-20250514"), Some(3.00));
        assert_eq!(input("claude-3-5-haiku-latest"), Some(0.80));
        assert_eq!(input("qwen-plus"), None);
        assert_eq!(input(""), None);
    }

    #[test]
    fn the_config_wins_and_adds_models() {
        let mut configured = Prices::new();
        configured.insert("gpt-4o".into(), p(1.0, 2.0, None, None));
        configured.insert("qwen-plus".into(), p(0.4, 1.2, Some(0.08), None));
        assert_eq!(
            price_for(&configured, "gpt-4o"),
            Some((p(1.0, 2.0, None, None), PriceSource::Config))
        );
        assert_eq!(
            price_for(&configured, "dashscope/Qwen-Plus").map(|(p, s)| (p.input, s)),
            Some((0.4, PriceSource::Config))
        );
        // Config names are exact: a dated name still falls back to the built-in family.
        assert_eq!(
            price_for(&configured, "gpt-4o-2024-08-06").map(|(_, s)| s),
            Some(PriceSource::BuiltIn)
        );
    }

    #[test]
    fn cache_reads_and_writes_are_billed_apart_from_the_rest_of_the_prompt() {
        let sonnet = p(3.0, 15.0, Some(0.30), Some(3.75));
        let tokens = Tokens {
            input: 1_000_000,
            output: 100_000,
            cache_read: 600_000,
            cache_write: 200_000,
        };
        // 200k uncached × 3 + 600k × 0.30 + 200k × 3.75 + 100k × 15, per million.
        assert!(close(cost_usd(&sonnet, tokens), 0.6 + 0.18 + 0.75 + 1.5));
        // No cache prices: every prompt token at the input price.
        let flat = p(2.0, 8.0, None, None);
        assert!(close(cost_usd(&flat, tokens), 2.0 + 0.8));
        // Counts that do not add up (cache larger than the prompt) never go negative.
        let odd = Tokens {
            input: 10,
            output: 0,
            cache_read: 20,
            cache_write: 0,
        };
        assert!(cost_usd(&sonnet, odd) >= 0.0);
    }

    #[test]
    fn every_built_in_price_is_sane() {
        for (name, price) in built_in() {
            assert!(price.input > 0.0 && price.output >= price.input, "{name}");
            assert!(price.cache_read.is_none_or(|c| c < price.input), "{name}");
            assert!(price.cache_write.is_none_or(|c| c > price.input), "{name}");
            assert_eq!(name, name.to_ascii_lowercase(), "{name}");
        }
    }
}
