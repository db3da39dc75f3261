//! What the user's traffic and MetaClaw's learning cost over a window, and how much of the
//! prompts the provider's cache served: the figures behind `status`, `/api/stats` and the
//! dashboard. Tokens are always shown; a cost only where the model has a price, and the
//! models without one are named, never guessed.

use std::collections::BTreeMap;

use metaclaw_store::{LearningUsage, ModelUsage};
use serde::{Deserialize, Serialize};

use super::prices::{PriceSource, Tokens, cost_usd, price_for};
use crate::config::Prices;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostReport {
    /// The window, in hours back from now.
    pub hours: u32,
    pub turns: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Cache reads over prompt tokens, of the turns whose provider reported its cache;
    /// `None` when none did.
    pub cache_read_share: Option<f64>,
    /// The same share estimated as if MetaClaw had added nothing (see [`share_without`]).
    pub cache_read_share_without_metaclaw: Option<f64>,
    /// Estimated tokens of MetaClaw's blocks in the forwarded prompts.
    pub injected_tokens: u64,
    /// `injected_tokens` at each model's uncached input price: an upper bound, since blocks
    /// resent with earlier messages are mostly read from the cache at its lower price.
    pub injected_cost_usd: Option<f64>,
    /// The turns' cost, of the models with a price.
    pub turns_cost_usd: Option<f64>,
    /// Models with turns in the window but no price: their turns count as tokens only.
    pub unpriced_models: Vec<String>,
    pub models: Vec<ModelCost>,
    pub learning: LearningCost,
    /// Day by day (UTC, oldest first), when asked for (`/api/stats?days=N`).
    #[serde(default)]
    pub daily: Vec<DayCost>,
}

/// One UTC day of the series: the figures of a report of that day alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DayCost {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub turns: u64,
    pub cache_read_share: Option<f64>,
    pub cache_read_share_without_metaclaw: Option<f64>,
    pub injected_tokens: u64,
    pub injected_cost_usd: Option<f64>,
    pub turns_cost_usd: Option<f64>,
    pub learning_calls: u64,
    pub learning_tokens: u64,
    pub learning_cost_usd: Option<f64>,
}

/// `day`'s figures: `models` the turns of that day, `learning` rows of any days (only
/// `day`'s are counted).
pub fn day_cost(
    day: String,
    models: Vec<ModelUsage>,
    learning: &[LearningUsage],
    learning_models: &BTreeMap<String, String>,
    prices: &Prices,
) -> DayCost {
    let own: Vec<LearningUsage> = learning.iter().filter(|r| r.day == day).cloned().collect();
    let r = report(24, models, &own, day.clone(), learning_models, prices);
    DayCost {
        day,
        turns: r.turns,
        cache_read_share: r.cache_read_share,
        cache_read_share_without_metaclaw: r.cache_read_share_without_metaclaw,
        injected_tokens: r.injected_tokens,
        injected_cost_usd: r.injected_cost_usd,
        turns_cost_usd: r.turns_cost_usd,
        learning_calls: r.learning.calls,
        learning_tokens: r.learning.input_tokens + r.learning.output_tokens,
        learning_cost_usd: r.learning.cost_usd,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCost {
    #[serde(flatten)]
    pub usage: ModelUsage,
    /// `config` or `built_in`; absent when the model has no price.
    pub price_source: Option<String>,
    pub cost_usd: Option<f64>,
    pub injected_cost_usd: Option<f64>,
}

/// Learning's calls over the UTC days the window touches (learning is counted per day).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LearningCost {
    /// The first UTC day counted, `YYYY-MM-DD`.
    pub since_day: String,
    pub calls: u64,
    pub failed: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of the purposes whose model has a price.
    pub cost_usd: Option<f64>,
    /// Purposes with calls whose model has no price (or is not known).
    pub unpriced: Vec<String>,
    pub by_purpose: Vec<PurposeCost>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PurposeCost {
    pub purpose: String,
    /// The model that purpose calls now; its price is applied to the whole window.
    pub model: Option<String>,
    pub calls: u64,
    pub failed: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
}

/// The report of a window: `models` from the turns, `learning` the per-day rows of its UTC
/// days, `learning_models` the model each learning purpose calls.
pub fn report(
    hours: u32,
    models: Vec<ModelUsage>,
    learning: &[LearningUsage],
    since_day: String,
    learning_models: &BTreeMap<String, String>,
    prices: &Prices,
) -> CostReport {
    let mut total = ModelUsage::default();
    let mut turns_cost = None;
    let mut injected_cost = None;
    let mut unpriced_models = Vec::new();
    let models = models
        .into_iter()
        .map(|usage| {
            total.add(&usage);
            let priced = price_for(prices, &usage.model);
            let (cost, injected) = match &priced {
                Some((price, _)) => (
                    Some(cost_usd(price, tokens_of(&usage))),
                    Some(cost_usd(
                        price,
                        Tokens {
                            input: usage.injected_tokens,
                            ..Tokens::default()
                        },
                    )),
                ),
                None => {
                    if usage.input_tokens + usage.output_tokens > 0 {
                        unpriced_models.push(usage.model.clone());
                    }
                    (None, None)
                }
            };
            turns_cost = add(turns_cost, cost);
            injected_cost = add(injected_cost, injected);
            ModelCost {
                usage,
                price_source: priced.map(|(_, source)| {
                    match source {
                        PriceSource::Config => "config",
                        PriceSource::BuiltIn => "built_in",
                    }
                    .to_owned()
                }),
                cost_usd: cost,
                injected_cost_usd: injected,
            }
        })
        .collect();
    CostReport {
        hours,
        turns: total.turns,
        input_tokens: total.input_tokens,
        output_tokens: total.output_tokens,
        cache_read_tokens: total.cache_read_tokens,
        cache_write_tokens: total.cache_write_tokens,
        cache_read_share: share(total.cache_read_tokens, total.cache_reported_input_tokens),
        cache_read_share_without_metaclaw: share_without(&total),
        injected_tokens: total.injected_tokens,
        injected_cost_usd: injected_cost,
        turns_cost_usd: turns_cost,
        unpriced_models,
        models,
        learning: learning_cost(learning, since_day, learning_models, prices),
        daily: Vec::new(),
    }
}

fn tokens_of(u: &ModelUsage) -> Tokens {
    Tokens {
        input: u.input_tokens,
        output: u.output_tokens,
        cache_read: u.cache_read_tokens,
        cache_write: u.cache_write_tokens,
    }
}

/// The cache-read share the agent would have had without MetaClaw, estimated from the
/// recorded figures. Without MetaClaw each prompt is `injected` tokens shorter, and the
/// blocks resent with earlier messages (`injected - block`) sit inside the prefix the
/// cache served, so they leave the cache reads too; the turn's own new block comes after
/// that prefix and was never read from the cache.
pub fn share_without(u: &ModelUsage) -> Option<f64> {
    let resent = u
        .cache_reported_injected_tokens
        .saturating_sub(u.cache_reported_block_tokens);
    share(
        u.cache_read_tokens.saturating_sub(resent),
        u.cache_reported_input_tokens
            .saturating_sub(u.cache_reported_injected_tokens),
    )
}

fn share(read: u64, input: u64) -> Option<f64> {
    (input > 0).then(|| (read as f64 / input as f64).min(1.0))
}

fn add(total: Option<f64>, part: Option<f64>) -> Option<f64> {
    match (total, part) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

fn learning_cost(
    rows: &[LearningUsage],
    since_day: String,
    models: &BTreeMap<String, String>,
    prices: &Prices,
) -> LearningCost {
    // One row per purpose, the window's days summed.
    let mut per_purpose: BTreeMap<&str, LearningUsage> = BTreeMap::new();
    for row in rows {
        per_purpose
            .entry(row.purpose.as_str())
            .or_default()
            .add(row);
    }
    let mut out = LearningCost {
        since_day,
        ..LearningCost::default()
    };
    for (purpose, sum) in per_purpose {
        let model = models.get(purpose).cloned();
        let cost = model
            .as_deref()
            .and_then(|m| price_for(prices, m))
            .map(|(price, _)| {
                let tokens = Tokens {
                    input: sum.input_tokens,
                    output: sum.output_tokens,
                    cache_read: sum.cache_read_tokens,
                    cache_write: sum.cache_write_tokens,
                };
                cost_usd(&price, tokens)
            });
        if cost.is_none() && sum.calls > 0 {
            out.unpriced.push(purpose.to_owned());
        }
        out.calls += sum.calls;
        out.failed += sum.failed;
        out.input_tokens += sum.input_tokens;
        out.output_tokens += sum.output_tokens;
        out.cost_usd = add(out.cost_usd, cost);
        out.by_purpose.push(PurposeCost {
            purpose: purpose.to_owned(),
            model,
            calls: sum.calls,
            failed: sum.failed,
            input_tokens: sum.input_tokens,
            output_tokens: sum.output_tokens,
            cost_usd: cost,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Price;

    fn usage(model: &str, input: u64, read: u64, injected: u64, block: u64) -> ModelUsage {
        ModelUsage {
            model: model.into(),
            turns: 2,
            turns_with_usage: 2,
            input_tokens: input,
            output_tokens: 100,
            cache_read_tokens: read,
            cache_write_tokens: 0,
            cache_reported_input_tokens: input,
            cache_reported_injected_tokens: injected,
            cache_reported_block_tokens: block,
            injected_tokens: injected,
            block_tokens: block,
        }
    }

    fn prices() -> Prices {
        let mut p = Prices::new();
        p.insert(
            "mine".into(),
            Price {
                input: 1.0,
                output: 2.0,
                cache_read: Some(0.1),
                cache_write: None,
            },
        );
        p
    }

    #[test]
    fn priced_and_unpriced_models_are_kept_apart() {
        let r = report(
            24,
            vec![
                usage("mine", 1_000_000, 500_000, 100_000, 40_000),
                usage("local-llama", 10_000, 0, 500, 500),
            ],
            &[],
            "2026-12-03".into(),
            &BTreeMap::new(),
            &prices(),
        );
        assert_eq!(r.turns, 4);
        assert_eq!(r.unpriced_models, ["local-llama"]);
        // 500k uncached at $1 + 500k read at $0.1 + 100 output at $2, per million.
        let cost = r.turns_cost_usd.unwrap();
        assert!((cost - (0.5 + 0.05 + 0.0002)).abs() < 1e-9, "{cost}");
        // Injected tokens of the priced model only, at the uncached price.
        assert!((r.injected_cost_usd.unwrap() - 0.1).abs() < 1e-9);
        assert_eq!(r.models[1].cost_usd, None);
        assert_eq!(r.models[0].price_source.as_deref(), Some("config"));
    }

    #[test]
    fn the_share_without_metaclaw_drops_the_resent_blocks_from_the_cached_prefix() {
        // 10,000-token prompt, 9,000 read from the cache; 1,000 injected of which 200 is the
        // new block (after the cached prefix) and 800 resent blocks (inside it).
        let u = usage("m", 10_000, 9_000, 1_000, 200);
        let r = report(
            24,
            vec![u.clone()],
            &[],
            String::new(),
            &BTreeMap::new(),
            &Prices::new(),
        );
        assert_eq!(r.cache_read_share, Some(0.9));
        let without = r.cache_read_share_without_metaclaw.unwrap();
        assert!((without - 8_200.0 / 9_000.0).abs() < 1e-12, "{without}");
        assert_eq!(r.turns_cost_usd, None);
        assert_eq!(r.unpriced_models, ["m"]);
        // No turn reported its cache: no share at all, not zero.
        let mut silent = u;
        silent.cache_reported_input_tokens = 0;
        silent.cache_read_tokens = 0;
        assert_eq!(share_without(&silent), None);
    }

    #[test]
    fn learning_is_priced_by_the_model_each_purpose_calls() {
        let row = |purpose: &str, calls: u64| LearningUsage {
            day: "2026-12-04".into(),
            purpose: purpose.into(),
            calls,
            failed: 1,
            input_tokens: 1_000_000,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        };
        let models = BTreeMap::from([
            ("evolution".to_owned(), "mine".to_owned()),
            ("embeddings".to_owned(), "text-embedding-3-small".to_owned()),
        ]);
        let l = report(
            24,
            vec![],
            &[
                row("evolution", 3),
                row("evolution", 2),
                row("embeddings", 7),
            ],
            "2026-12-03".into(),
            &models,
            &prices(),
        )
        .learning;
        assert_eq!((l.calls, l.failed), (12, 3));
        assert_eq!(l.by_purpose.len(), 2);
        let evolution = l
            .by_purpose
            .iter()
            .find(|p| p.purpose == "evolution")
            .unwrap();
        assert_eq!(evolution.calls, 5);
        assert!((evolution.cost_usd.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(l.cost_usd, evolution.cost_usd);
        assert_eq!(l.unpriced, ["embeddings"]);
    }

    #[test]
    fn a_day_counts_only_its_own_learning() {
        let row = |day: &str| LearningUsage {
            day: day.into(),
            purpose: "evolution".into(),
            calls: 2,
            failed: 0,
            input_tokens: 1_000_000,
            output_tokens: 10,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        };
        let models = BTreeMap::from([("evolution".to_owned(), "mine".to_owned())]);
        let d = day_cost(
            "2026-12-04".into(),
            vec![usage("mine", 10_000, 9_000, 1_000, 200)],
            &[row("2026-12-03"), row("2026-12-04")],
            &models,
            &prices(),
        );
        assert_eq!(d.day, "2026-12-04");
        assert_eq!((d.turns, d.learning_calls), (2, 2));
        assert_eq!(d.learning_tokens, 1_000_010);
        assert!((d.learning_cost_usd.unwrap() - 1.00002).abs() < 1e-9);
        assert_eq!(d.cache_read_share, Some(0.9));
        let without = d.cache_read_share_without_metaclaw.unwrap();
        assert!((without - 8_200.0 / 9_000.0).abs() < 1e-12, "{without}");
        assert!((d.injected_cost_usd.unwrap() - 0.001).abs() < 1e-12);
    }
}
