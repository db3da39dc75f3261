//! Keeping glibc's allocator from holding memory the proxy no longer uses.
//!
//! Declared here rather than through a crate: these are two calls that take no pointers.

/// Gives the system back the memory the allocator holds free. glibc keeps what the threads
/// freed in their arenas for reuse, so after a burst of large requests (or a background job
/// that read many turns) tens of MB stay resident though nothing uses them; `malloc_trim`
/// returns every arena's free pages.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn release_freed_memory() {
    #[allow(unsafe_code)]
    // SAFETY: the declaration matches glibc's `int malloc_trim(size_t pad)`, which takes no
    // pointers and only rearranges glibc's own free lists under their locks.
    unsafe extern "C" {
        safe fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    let began = std::time::Instant::now();
    let released = malloc_trim(0) == 1;
    let took_us = began.elapsed().as_micros();
    tracing::debug!(released, took_us, "freed memory given back to the system");
}

/// Other allocators (musl, macOS, Windows) give free memory back themselves.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_freed_memory() {}

/// Sets glibc's allocator up for a long-running proxy. Call once at start, before the
/// proxy's threads allocate much.
///
/// - Every allocation of 1 MiB or more becomes a mapping of its own, returned to the system
///   the moment it is freed. glibc otherwise raises this threshold to the largest block freed
///   so far (up to 32 MiB), so after one huge request every later body is carved from the
///   heap and stays resident: three 31 MB requests left 90 MB behind that no trim gave back.
///   Request bodies and their copies are the only blocks this large, so the extra system
///   calls cost nothing measurable.
/// - No new arenas. glibc gives each new thread an arena of its own, up to eight per core,
///   and each keeps the pages its thread freed: the blocking threads that come and go
///   (SQLite, learning jobs) spread a long session's garbage over many arenas, and the soak
///   ended idle at 145% of its start (126% with two arenas). With the limit at one, threads
///   started from here on share the arenas that exist (the main one, and those of the few
///   runtime threads already running). Threads keep their own caches of small blocks
///   (tcache), so this does not serialise the proxy's allocations; the benchmark measures it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn configure() {
    const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
    const M_ARENA_MAX: std::ffi::c_int = -8;
    #[allow(unsafe_code)]
    // SAFETY: the declaration matches glibc's `int mallopt(int param, int value)`, which
    // takes no pointers; both parameters accept these values.
    unsafe extern "C" {
        safe fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
    }
    let large = mallopt(M_MMAP_THRESHOLD, 1024 * 1024) == 1;
    let arenas = mallopt(M_ARENA_MAX, 1) == 1;
    tracing::debug!(large, arenas, "allocator configured for a long run");
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn configure() {}
