//! The benchmark's result and its text and JSON renderings.

use std::fmt::Write;

use serde::Serialize;

use super::stats::{Percentiles, PhaseStats};

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub concurrency: usize,
    pub requests_per_phase: usize,
    pub rounds: usize,
    pub client_threads: usize,
}

/// Proxied minus direct, for one request kind.
#[derive(Debug, Clone, Serialize)]
pub struct Added {
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p99_ms: Option<f64>,
    /// Added to the pauses between a stream's chunks.
    pub gap_p50_ms: Option<f64>,
    pub gap_p99_ms: Option<f64>,
    /// Proxied throughput over direct throughput.
    pub throughput_ratio: f64,
}

impl Added {
    pub fn between(direct: &PhaseStats, proxied: &PhaseStats) -> Self {
        let diff = |d: Option<Percentiles>, p: Option<Percentiles>, f: fn(&Percentiles) -> f64| {
            Some(f(&p?) - f(&d?))
        };
        let (ttft_d, ttft_p) = (direct.ttft_ms, proxied.ttft_ms);
        let (gap_d, gap_p) = (direct.gap_ms, proxied.gap_ms);
        Self {
            latency_p50_ms: proxied.latency_ms.p50 - direct.latency_ms.p50,
            latency_p99_ms: proxied.latency_ms.p99 - direct.latency_ms.p99,
            ttft_p50_ms: diff(ttft_d, ttft_p, |p| p.p50),
            ttft_p99_ms: diff(ttft_d, ttft_p, |p| p.p99),
            gap_p50_ms: diff(gap_d, gap_p, |p| p.p50),
            gap_p99_ms: diff(gap_d, gap_p, |p| p.p99),
            throughput_ratio: if direct.throughput_rps > 0.0 {
                proxied.throughput_rps / direct.throughput_rps
            } else {
                0.0
            },
        }
    }
}

/// The same new-conversation workload through a proxy with skills off and one with skills
/// on, each against the direct baseline of the same rounds.
#[derive(Debug, Clone, Serialize)]
pub struct SkillsCompare {
    pub off: Added,
    pub on: Added,
    /// Mean `x-metaclaw-overhead-ms` with skills off and on.
    pub overhead_off_ms: Option<f64>,
    pub overhead_on_ms: Option<f64>,
}

/// New questions through a MetaClaw holding a large library, against the direct baseline.
#[derive(Debug, Clone, Serialize)]
pub struct LibraryCompare {
    pub skills: usize,
    pub memories: usize,
    /// How long writing the library took (before the proxy started).
    pub seed_seconds: f64,
    pub added: Added,
    /// Mean `x-metaclaw-overhead-ms`.
    pub overhead_ms: Option<f64>,
    /// The same questions asked again in new conversations: retrieval without embedding
    /// the question (its vector is kept), the rest of the turn the same.
    pub added_asked_again: Added,
    pub overhead_asked_again_ms: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub settings: Settings,
    pub phases: Vec<PhaseStats>,
    pub added_non_stream: Option<Added>,
    pub added_stream: Option<Added>,
    /// What LiteLLM's proxy adds over the same upstream, in the same run (`--litellm`).
    pub litellm_non_stream: Option<Added>,
    pub litellm_stream: Option<Added>,
    pub skills: Option<SkillsCompare>,
    pub library: Option<LibraryCompare>,
    /// What the proxy adds to streams whose chunks come apart (`--chunk-gap-ms`).
    pub gaps: Option<Added>,
    pub proxy_rss_idle_kib: Option<u64>,
    pub proxy_rss_peak_kib: Option<u64>,
    pub total_errors: u64,
}

fn opt(v: Option<f64>, signed: bool) -> String {
    match (v, signed) {
        (Some(v), true) => format!("{v:+.3}"),
        (Some(v), false) => format!("{v:.3}"),
        (None, _) => "-".into(),
    }
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "-".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

impl Report {
    pub fn to_text(&self) -> String {
        let s = &self.settings;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "MetaClaw proxy benchmark: {} connections, {} requests per phase in {} rounds, {} client thread(s)",
            s.concurrency, s.requests_per_phase, s.rounds, s.client_threads
        );
        let _ = writeln!(
            out,
            "\n{:<20} {:>7} {:>5} {:>9} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}",
            "phase",
            "reqs",
            "err",
            "req/s",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "max ms",
            "ttft p50",
            "ttft p99",
            "overhead"
        );
        for p in &self.phases {
            let l = &p.latency_ms;
            let _ = writeln!(
                out,
                "{:<20} {:>7} {:>5} {:>9.1} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>9} {:>9} {:>9}",
                p.name,
                p.requests,
                p.errors,
                p.throughput_rps,
                l.p50,
                l.p90,
                l.p99,
                l.max,
                opt(p.ttft_ms.map(|t| t.p50), false),
                opt(p.ttft_ms.map(|t| t.p99), false),
                opt(p.overhead_ms_mean, false),
            );
        }
        out.push('\n');
        for (who, kind, added) in [
            ("MetaClaw", "non-stream", &self.added_non_stream),
            ("MetaClaw", "stream", &self.added_stream),
            ("LiteLLM", "non-stream", &self.litellm_non_stream),
            ("LiteLLM", "stream", &self.litellm_stream),
        ] {
            let Some(a) = added else { continue };
            let _ = writeln!(
                out,
                "added by {who}, {kind}: latency p50 {:+.3} ms, p99 {:+.3} ms; TTFT p50 {} ms, p99 {} ms; chunk gap p50 {} ms, p99 {} ms; throughput ratio {:.2}",
                a.latency_p50_ms,
                a.latency_p99_ms,
                opt(a.ttft_p50_ms, true),
                opt(a.ttft_p99_ms, true),
                opt(a.gap_p50_ms, true),
                opt(a.gap_p99_ms, true),
                a.throughput_ratio,
            );
        }
        if let Some(k) = &self.skills {
            for (label, a, overhead) in [
                ("skills off", &k.off, k.overhead_off_ms),
                ("skills on ", &k.on, k.overhead_on_ms),
            ] {
                let _ = writeln!(
                    out,
                    "new conversations, {label}: added latency p50 {:+.3} ms, p99 {:+.3} ms; throughput ratio {:.2}; MetaClaw's own time {} ms",
                    a.latency_p50_ms,
                    a.latency_p99_ms,
                    a.throughput_ratio,
                    opt(overhead, false),
                );
            }
        }
        if let Some(l) = &self.library {
            let _ = writeln!(
                out,
                "new questions, {} skills and {} memories (seeded in {:.0} s): added latency p50 {:+.3} ms, p99 {:+.3} ms; throughput ratio {:.2}; MetaClaw's own time {} ms",
                l.skills,
                l.memories,
                l.seed_seconds,
                l.added.latency_p50_ms,
                l.added.latency_p99_ms,
                l.added.throughput_ratio,
                opt(l.overhead_ms, false),
            );
            let _ = writeln!(
                out,
                "the same questions asked again (each question's vector already computed): added latency p50 {:+.3} ms, p99 {:+.3} ms; MetaClaw's own time {} ms",
                l.added_asked_again.latency_p50_ms,
                l.added_asked_again.latency_p99_ms,
                opt(l.overhead_asked_again_ms, false),
            );
        }
        if let Some(g) = &self.gaps {
            let _ = writeln!(
                out,
                "streams with paused chunks: added TTFT p50 {} ms, p99 {} ms; added chunk gap p50 {} ms, p99 {} ms",
                opt(g.ttft_p50_ms, true),
                opt(g.ttft_p99_ms, true),
                opt(g.gap_p50_ms, true),
                opt(g.gap_p99_ms, true),
            );
        }
        let _ = writeln!(
            out,
            "\nproxy RSS: idle {}, peak under load {}",
            mib(self.proxy_rss_idle_kib),
            mib(self.proxy_rss_peak_kib)
        );
        let _ = writeln!(out, "errors: {}", self.total_errors);
        for p in self.phases.iter().filter(|p| p.errors > 0) {
            let _ = writeln!(
                out,
                "  {}: {} errors, first: {}",
                p.name,
                p.errors,
                p.first_error.as_deref().unwrap_or("?")
            );
        }
        out
    }
}
