//! Peak memory of a process under load, sampled on a timer in its own task. Sampling is a
//! measurement running beside the load, not a synchronisation point.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::procs::rss_kib;

pub struct PeakRss {
    stop: CancellationToken,
    task: JoinHandle<u64>,
}

impl PeakRss {
    pub fn start(pid: u32, every: Duration) -> Self {
        let stop = CancellationToken::new();
        let token = stop.clone();
        let task = tokio::spawn(async move {
            let mut peak = 0;
            let mut tick = tokio::time::interval(every);
            loop {
                tokio::select! {
                    _ = tick.tick() => peak = peak.max(rss_kib(pid).unwrap_or(0)),
                    () = token.cancelled() => return peak.max(rss_kib(pid).unwrap_or(0)),
                }
            }
        });
        Self { stop, task }
    }

    /// Stops sampling; returns the peak seen, in KiB.
    pub async fn finish(self) -> u64 {
        self.stop.cancel();
        self.task.await.unwrap_or(0)
    }
}
