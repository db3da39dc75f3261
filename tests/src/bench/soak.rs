//! The soak run's bookkeeping: turns done, the proxy's memory at each checkpoint, and the
//! table it ends with.

use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::client;
use super::procs::{rss_kib, rss_parts_kib};

/// One row of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Checkpoint {
    pub label: String,
    pub turns: u64,
    pub elapsed_s: f64,
    pub rss_kib: u64,
    /// `metaclaw_sticky_blocks_in_memory` from `/metrics`, when it reports it.
    pub blocks_in_memory: Option<u64>,
    /// `metaclaw_recorder_queue_depth`: turns waiting to be written.
    pub recorder_queue: Option<u64>,
}

/// Counts turns across phases and takes a checkpoint every `every` turns.
pub struct Progress {
    pid: u32,
    proxy: SocketAddr,
    every: u64,
    /// The run stops once the proxy's RSS passes this (KiB): a leak must not take the
    /// machine down with it.
    ceiling_kib: u64,
    started: Instant,
    done: AtomicU64,
    /// Bytes of the request bodies sent: what a layout storing each request whole keeps.
    sent_bytes: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
    checkpoints: Mutex<Vec<Checkpoint>>,
}

impl Progress {
    pub fn new(pid: u32, proxy: SocketAddr, every: u64, ceiling_mb: u64) -> Self {
        Progress {
            pid,
            proxy,
            every: every.max(1),
            ceiling_kib: ceiling_mb.saturating_mul(1_000_000) / 1024,
            started: Instant::now(),
            done: AtomicU64::new(0),
            sent_bytes: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            first_error: Mutex::new(None),
            checkpoints: Mutex::new(Vec::new()),
        }
    }

    pub fn turns(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Counts a request body about to be sent.
    pub fn sent(&self, bytes: usize) {
        self.sent_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// The request bodies sent so far, in bytes.
    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes.load(Ordering::Relaxed)
    }

    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    pub fn first_error(&self) -> Option<String> {
        self.first_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn failed(&self, error: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.first_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_or_insert(error);
    }

    /// Counts a finished turn; the turn that completes a multiple of `every` takes the
    /// checkpoint (labelled with its phase) before its worker goes on. Fails once the
    /// proxy's RSS is past the ceiling (checked every 1,000 turns).
    pub async fn turn_done(&self, phase: &str) -> anyhow::Result<()> {
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_multiple_of(self.every) {
            self.checkpoint(phase).await;
        }
        if n.is_multiple_of(1000) {
            let rss = rss_kib(self.pid).unwrap_or(0);
            if rss > self.ceiling_kib {
                self.checkpoint("over the RSS ceiling").await;
                anyhow::bail!(
                    "the proxy's RSS reached {:.0} MB after {n} turns: stopped",
                    mb(rss)
                );
            }
        }
        Ok(())
    }

    /// Records the proxy's RSS now under `label`.
    pub async fn checkpoint(&self, label: &str) -> Checkpoint {
        let metrics = scrape(self.proxy).await.unwrap_or_default();
        let gauge = |name: &str| {
            metrics
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
                .and_then(|v| v.trim().parse().ok())
        };
        let (anon, file) = rss_parts_kib(self.pid).unwrap_or_default();
        let c = Checkpoint {
            label: label.to_owned(),
            turns: self.turns(),
            elapsed_s: self.started.elapsed().as_secs_f64(),
            rss_kib: rss_kib(self.pid).unwrap_or(0),
            blocks_in_memory: gauge("metaclaw_sticky_blocks_in_memory"),
            recorder_queue: gauge("metaclaw_recorder_queue_depth"),
        };
        // As it happens, so a run cut short by its time limit still shows its trend.
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "soak: {:<20} {:>8} turns {:>6.0} s  RSS {:>8.1} MB (anon {:.1}, file {:.1})  blocks in memory {}  recorder queue {}",
                c.label,
                c.turns,
                c.elapsed_s,
                mb(c.rss_kib),
                mb(anon),
                mb(file),
                opt(c.blocks_in_memory),
                opt(c.recorder_queue)
            );
        }
        self.checkpoints
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(c.clone());
        c
    }

    pub fn checkpoints(&self) -> Vec<Checkpoint> {
        self.checkpoints
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// The proxy's `/metrics` text.
async fn scrape(proxy: SocketAddr) -> Option<String> {
    let (status, body) = client::get(proxy, "/metrics").await.ok()?;
    (status == 200).then(|| String::from_utf8_lossy(&body).into_owned())
}

/// What the soak targets: memory growth over the run and what idle gives back.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub start_kib: u64,
    pub peak_kib: u64,
    pub idle_kib: u64,
    pub growth_mb: f64,
    pub idle_vs_start: f64,
    pub growth_ok: bool,
    pub idle_ok: bool,
}

/// Growth at most this many MB (10^6 bytes) over the start.
pub const MAX_GROWTH_MB: f64 = 30.0;
/// Idle RSS at most this much above the start.
pub const MAX_IDLE_RATIO: f64 = 1.2;

impl Verdict {
    pub fn new(start_kib: u64, peak_kib: u64, idle_kib: u64) -> Self {
        let growth_mb = (peak_kib.saturating_sub(start_kib) * 1024) as f64 / 1e6;
        let idle_vs_start = if start_kib > 0 {
            idle_kib as f64 / start_kib as f64
        } else {
            f64::INFINITY
        };
        Verdict {
            start_kib,
            peak_kib,
            idle_kib,
            growth_mb,
            idle_vs_start,
            growth_ok: growth_mb <= MAX_GROWTH_MB,
            idle_ok: idle_vs_start <= MAX_IDLE_RATIO,
        }
    }

    pub fn ok(&self) -> bool {
        self.growth_ok && self.idle_ok
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn mb(kib: u64) -> f64 {
    (kib * 1024) as f64 / 1e6
}

/// The table: one row per checkpoint, then the verdict.
pub fn table(title: &str, rows: &[Checkpoint], verdict: &Verdict) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{title}\n");
    let _ = writeln!(
        out,
        "{:<24} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}",
        "checkpoint", "turns", "elapsed", "RSS MB", "vs start", "blocks mem", "rec queue"
    );
    for r in rows {
        let growth = mb(r.rss_kib) - mb(verdict.start_kib);
        let _ = writeln!(
            out,
            "{:<24} {:>9} {:>8.0}s {:>9.1} {:>+9.1} {:>10} {:>9}",
            r.label,
            r.turns,
            r.elapsed_s,
            mb(r.rss_kib),
            growth,
            opt(r.blocks_in_memory),
            opt(r.recorder_queue),
        );
    }
    let pass = |ok| if ok { "met" } else { "NOT met" };
    let _ = writeln!(
        out,
        "\npeak RSS {:.1} MB: growth {:+.1} MB (target ≤ {MAX_GROWTH_MB} MB: {})",
        mb(verdict.peak_kib),
        verdict.growth_mb,
        pass(verdict.growth_ok)
    );
    let _ = writeln!(
        out,
        "idle RSS {:.1} MB: {:.0}% of the start (target ≤ {:.0}%: {})",
        mb(verdict.idle_kib),
        verdict.idle_vs_start * 100.0,
        MAX_IDLE_RATIO * 100.0,
        pass(verdict.idle_ok)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_measures_growth_from_the_start() {
        let v = Verdict::new(20_000, 40_000, 23_000);
        assert!((v.growth_mb - 20.48).abs() < 0.01);
        assert!(v.growth_ok && v.idle_ok && v.ok());
        let v = Verdict::new(20_000, 60_000, 30_000);
        assert!(!v.growth_ok && !v.idle_ok);
    }
}
