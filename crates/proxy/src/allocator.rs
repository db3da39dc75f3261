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

/// CPU time the process has used so far, in clock ticks (user + system): whether anything
/// ran since the last look, so a quiet process is not trimmed again for nothing. `None`
/// where it cannot be read.
#[cfg(target_os = "linux")]
pub fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name in parentheses may hold spaces; the fields after it do not.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    // utime and stime are fields 14 and 15 of the line, the 12th and 13th after the name.
    let user: u64 = fields.nth(11)?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

#[cfg(not(target_os = "linux"))]
pub fn cpu_ticks() -> Option<u64> {
    None
}

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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn cpu_ticks_grow_with_work() {
        let start = super::cpu_ticks().unwrap();
        let began = std::time::Instant::now();
        let mut x = 0u64;
        // Work until the clock moves (one tick is 10 ms); bounded so a broken reading fails.
        while super::cpu_ticks().unwrap() == start {
            for i in 0..100_000u64 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
            assert!(began.elapsed().as_secs() < 30, "CPU time never moved ({x})");
        }
        assert!(super::cpu_ticks().unwrap() > start);
    }
}
