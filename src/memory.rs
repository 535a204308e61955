//! Memory and the operating system: giving freed memory back between the pipeline's
//! stages, and how much memory is left for a command that must know before it starts.
//!
//! glibc's allocator keeps the pages of freed small allocations for reuse, so the
//! transient tokens and per-term buffers of index building would stay resident through
//! the whole run, beside the fact vectors allocated next. [`release_freed_memory`]
//! returns them (`malloc_trim`); elsewhere it does nothing. [`available_bytes`] is what
//! the system says is left.

/// Returns the allocator's free pages to the operating system, where that is possible.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory held by the allocator; it is
    // thread-safe and touches no live allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The memory this process may still take, in bytes, where the system says: Linux's
/// `MemAvailable`, lowered to what a cgroup (v2) memory limit leaves. `None` where
/// neither can be read (then no size is refused for memory alone).
pub fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let available = meminfo.as_deref().and_then(mem_available);
    let cgroup_left = cgroup_memory_left();
    match (available, cgroup_left) {
        (Some(available), Some(left)) => Some(available.min(left)),
        (available, left) => available.or(left),
    }
}

/// `MemAvailable` of `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))?;
    let kilobytes: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kilobytes.checked_mul(1024)
}

/// What this process's cgroup (v2) memory limit leaves: `memory.max - memory.current`
/// of the cgroup named in `/proc/self/cgroup`; `None` without a limit.
fn cgroup_memory_left() -> Option<u64> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let group = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?;
    let directory = std::path::Path::new("/sys/fs/cgroup").join(group.trim_start_matches('/'));
    let read = |name: &str| std::fs::read_to_string(directory.join(name)).ok();
    let limit: u64 = read("memory.max")?.trim().parse().ok()?;
    let used: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(limit.saturating_sub(used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let meminfo =
            "MemTotal:       32768000 kB\nMemFree:         1000 kB\nMemAvailable:   24032072 kB\n";
        assert_eq!(mem_available(meminfo), Some(24_032_072 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
    }
}
