//! The process's allocator: jemalloc, for every allocation in the process (Rust, SQLite,
//! GTK), set up for a program that runs for weeks.
//!
//! glibc's allocator kept what a long session freed: small blocks that live long (open
//! sessions, caches) sit between the garbage of the turns around them and pin its pages,
//! so even after `malloc_trim` the soak's full run came back to rest at 128% of its start
//! (92 MB). jemalloc keeps blocks of one size together and gives free pages back by
//! itself: in the same soak the process came to rest at 114% of its start and peaked
//! 6 MB lower (docs/benchmarks.md, Soak).
//!
//! - `narenas:1`: one arena for all threads. Blocking threads (SQLite, learning jobs) come
//!   and go; with an arena per CPU each would keep the pages its threads freed. Threads
//!   keep their own caches of small blocks, so this does not serialise allocation.
//! - `background_thread:true`, `dirty_decay_ms:250`, `muzzy_decay_ms:0`: a background
//!   thread returns pages freed a quarter of a second ago to the system, also while the
//!   process is idle (glibc returns nothing unless asked). Under load the proxy frees tens
//!   of MB a second (request bodies, parsed JSON): with a 1 s decay the pages waiting for
//!   it raised the short soak's peak by 5 MB (+25.2 MB against +20.3); giving them back at
//!   once (0) cost the benchmark a sixth of its throughput, 250 ms nothing measurable.
//! - `tcache_max:4096`: threads cache only blocks up to 4 KiB. Each thread's cache of
//!   freed blocks stays with it while it sleeps, so larger cached blocks (request bodies,
//!   SQLite pages) held by idle worker threads kept ~3 MB after a busy stretch: the short
//!   soak rested at 114% of its start with it, 117-118% without; no cache at all rested at
//!   109% but added half again to MetaClaw's own work per request in the benchmark.

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Read by jemalloc before `main` (its documented `malloc_conf` symbol, a `const char *`);
/// `MALLOC_CONF` in the environment still overrides it.
#[allow(unsafe_code, non_upper_case_globals)]
#[unsafe(export_name = "malloc_conf")]
static malloc_conf: Option<&std::ffi::c_char> = Some({
    // SAFETY: the pointer is the first byte of a NUL-terminated string literal that lives
    // for the whole program; `Option<&T>` has the layout of a nullable pointer.
    unsafe {
        &*c"narenas:1,background_thread:true,dirty_decay_ms:250,muzzy_decay_ms:0,tcache_max:4096"
            .as_ptr()
    }
});
