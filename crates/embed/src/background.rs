//! The thread that embeds what no one waits for (the indexes of memories and skills).
//!
//! The encoder's large dense layers split their work over rayon's pool. A query embedded while
//! an index was being built queued behind the index's large products on the same two
//! workers, and a turn's retrieval waited for learning. Index work runs instead on a
//! pool of one thread of its own at the lowest CPU priority: the query keeps the global pool
//! to itself, and the kernel gives the cores to it first.

/// Niceness of the background thread (0 is normal, 19 the lowest priority): it yields its
/// core to anything else that wants one, the engine's own turns first.
#[cfg(target_os = "linux")]
pub const NICE: i32 = 19;

/// Thread name, as `/proc` shows it (at most 15 bytes there).
pub const THREAD_NAME: &str = "embed-indexing";

/// A one-thread pool for background embedding; `None` when the thread could not be started
/// (then background work runs on the caller's thread, as before).
pub fn pool() -> Option<rayon::ThreadPool> {
    match rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .thread_name(|_| THREAD_NAME.to_owned())
        .start_handler(|_| lower_priority())
        .build()
    {
        Ok(pool) => Some(pool),
        Err(e) => {
            tracing::warn!(error = %e, "no background embedding thread; indexes are embedded at normal priority");
            None
        }
    }
}

fn lower_priority() {
    // On Linux, niceness is per thread and this call applies to the calling thread only.
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::process::setpriority_process(None, NICE) {
        tracing::debug!(error = %e, "could not lower the background embedding thread's priority");
    }
}
