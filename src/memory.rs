//! Giving freed memory back to the operating system between the pipeline's stages.
//!
//! glibc's allocator keeps the pages of freed small allocations for reuse, so the
//! transient tokens and per-term buffers of index building would stay resident through
//! the whole run, beside the fact vectors allocated next. [`release_freed_memory`]
//! returns them (`malloc_trim`); elsewhere it does nothing.

/// Returns the allocator's free pages to the operating system, where that is possible.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory held by the allocator; it is
    // thread-safe and touches no live allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}
