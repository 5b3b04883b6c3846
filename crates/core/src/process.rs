//! Process-wide settings a native program (the CLI, the benchmarks) chooses for itself; a
//! library never calls these.

/// Keeps freed memory in the process instead of returning it to the OS at once (glibc on Linux;
/// elsewhere nothing happens). glibc maps allocations above a threshold (128 KiB, raised
/// dynamically) separately and trims the heap top when more than twice that is free, so a loop
/// that allocates and frees a few megabytes per step — the Bloch reverse pass does, ~8 MB per
/// tilt at N = 315 — pays page faults and unmapping on every step: ~18 % of a borane gradient
/// (measured beside `GLIBC_TUNABLES`). Returns whether both settings were accepted.
pub fn keep_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// The largest mmap threshold glibc accepts on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
        const MMAP_THRESHOLD: libc::c_int = 32 << 20;
        const TRIM_THRESHOLD: libc::c_int = 256 << 20;
        // SAFETY: mallopt only changes allocator parameters; it is called with valid options.
        unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 && libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn accepted_on_glibc() {
        let accepted = super::keep_freed_memory();
        assert_eq!(accepted, cfg!(all(target_os = "linux", target_env = "gnu")));
        // Allocating and freeing still works afterwards.
        let v = vec![1.0_f64; 1 << 20];
        assert_eq!(v.iter().sum::<f64>(), (1 << 20) as f64);
    }
}
