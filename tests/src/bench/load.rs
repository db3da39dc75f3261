//! Load: `concurrency` tasks, each on its own keep-alive connection, until the round's request
//! budget is spent. Closed loop (the next request as soon as the previous one finished)
//! measures throughput; with a `rate` the tasks pace themselves to that total rate, which
//! measures the latency MetaClaw adds when the machine is not saturated.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::client::{Conn, Sample, Target};

#[derive(Debug, Default)]
pub struct RoundResult {
    pub samples: Vec<Sample>,
    pub errors: u64,
    pub first_error: Option<String>,
    /// From the first request sent to the last response read.
    pub wall: Duration,
}

impl RoundResult {
    pub fn absorb(&mut self, other: RoundResult) {
        self.samples.extend(other.samples);
        self.errors += other.errors;
        self.first_error = self.first_error.take().or(other.first_error);
        self.wall += other.wall;
    }
}

pub async fn run_round(
    target: &Target,
    concurrency: usize,
    requests: usize,
    rate: Option<f64>,
) -> Result<RoundResult> {
    let target = Arc::new(target.clone());
    // Connections are opened before the clock starts: the bench measures requests, not dials.
    let mut conns = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        conns.push(Conn::open(target.addr).await?);
    }
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, conn)| {
            // Each task sends every `concurrency / rate` seconds, offset from the others so the
            // tasks together send evenly at `rate` instead of in bursts of `concurrency`.
            let pace = rate.map(|r| {
                let every = Duration::from_secs_f64(concurrency as f64 / r.max(1.0));
                let offset = every.mul_f64(i as f64 / concurrency as f64);
                (offset, every)
            });
            tokio::spawn(worker(conn, target.clone(), next.clone(), requests, pace))
        })
        .collect();
    let mut result = RoundResult::default();
    for task in tasks {
        result.absorb(task.await?);
    }
    result.wall = start.elapsed();
    Ok(result)
}

async fn worker(
    mut conn: Conn,
    target: Arc<Target>,
    next: Arc<AtomicUsize>,
    requests: usize,
    pace: Option<(Duration, Duration)>,
) -> RoundResult {
    let mut pace = pace.map(|(offset, every)| {
        let mut i = tokio::time::interval_at(tokio::time::Instant::now() + offset, every);
        i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        i
    });
    let mut out = RoundResult {
        samples: Vec::with_capacity(requests / 8 + 1),
        ..RoundResult::default()
    };
    // Every claimed slot ends as a sample or an error, so the loop is bounded even when the
    // server is gone.
    while next.fetch_add(1, Ordering::Relaxed) < requests {
        if let Some(p) = pace.as_mut() {
            p.tick().await;
        }
        match conn.call(&target).await {
            Ok(sample) => out.samples.push(sample),
            Err(e) => {
                out.errors += 1;
                out.first_error.get_or_insert_with(|| format!("{e:#}"));
                if let Ok(fresh) = Conn::open(target.addr).await {
                    conn = fresh;
                }
            }
        }
    }
    out
}
