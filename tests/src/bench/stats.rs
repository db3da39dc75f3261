//! Summaries of a phase's samples.

use std::time::Duration;

use serde::Serialize;

use super::client::Sample;
use super::load::RoundResult;

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Percentiles {
    fn of(mut values: Vec<Duration>) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable();
        // Nearest rank.
        let at = |p: f64| {
            let rank = (p * values.len() as f64).ceil() as usize;
            ms(values[rank.clamp(1, values.len()) - 1])
        };
        Some(Self {
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            max: at(1.0),
        })
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PhaseStats {
    pub name: String,
    pub requests: usize,
    pub errors: u64,
    pub first_error: Option<String>,
    pub throughput_rps: f64,
    pub latency_ms: Percentiles,
    pub ttft_ms: Option<Percentiles>,
    /// Pauses between a stream's chunks after the first (streaming only).
    pub gap_ms: Option<Percentiles>,
    /// Mean of `x-metaclaw-overhead-ms` over the responses that carried it.
    pub overhead_ms_mean: Option<f64>,
    pub overhead_samples: usize,
}

impl PhaseStats {
    pub fn new(name: &str, r: RoundResult) -> Self {
        let latencies: Vec<Duration> = r.samples.iter().map(|s| s.latency).collect();
        let ttfts: Vec<Duration> = r.samples.iter().filter_map(|s| s.ttft).collect();
        let gaps: Vec<Duration> = r
            .samples
            .iter()
            .flat_map(|s| s.gaps.iter().copied())
            .collect();
        let overheads: Vec<f64> = r
            .samples
            .iter()
            .filter_map(|s: &Sample| s.overhead_ms)
            .collect();
        let wall = r.wall.as_secs_f64();
        Self {
            name: name.to_owned(),
            requests: r.samples.len(),
            errors: r.errors,
            first_error: r.first_error,
            throughput_rps: if wall > 0.0 {
                r.samples.len() as f64 / wall
            } else {
                0.0
            },
            latency_ms: Percentiles::of(latencies).unwrap_or_default(),
            ttft_ms: Percentiles::of(ttfts),
            gap_ms: Percentiles::of(gaps),
            overhead_ms_mean: (!overheads.is_empty())
                .then(|| overheads.iter().sum::<f64>() / overheads.len() as f64),
            overhead_samples: overheads.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let values = (1..=100).map(Duration::from_millis).collect();
        let p = Percentiles::of(values).unwrap();
        assert_eq!((p.p50, p.p90, p.p99, p.max), (50.0, 90.0, 99.0, 100.0));
        let one = Percentiles::of(vec![Duration::from_millis(3)]).unwrap();
        assert_eq!(one.p50, 3.0);
        assert!(Percentiles::of(Vec::new()).is_none());
    }
}
