//! A counting global allocator for heap-bound tests: live bytes and their peak, per thread.
//! Include with `#[path = "common/heap.rs"] mod heap;`.
//!
//! Counts are kept per thread: the test harness's own thread (collecting the output of a test
//! that just ended) and tests running beside the measured one allocate too, and a global count
//! once put 5 KB of theirs into a bound (issue 24: "281111 B kept for 17000 chunks" under load).
//! The code measured here allocates on the calling thread only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts live heap bytes and their peak on each thread.
pub struct Counting;

thread_local! {
    // Const-initialised `Cell`s without destructors: reading them never allocates (which would
    // recurse into the allocator) and works during thread teardown.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + n;
        live.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's layout contract is forwarded unchanged.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            add(l.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's layout contract is forwarded unchanged.
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            add(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from this allocator, i.e. from `System`, with layout `l`.
        unsafe { System.dealloc(p, l) };
        add(-(l.size() as isize));
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: `p` came from `System` with layout `l`; the caller's contract is forwarded.
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            add(-(l.size() as isize));
            add(new as isize);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Heap bytes this thread has live now (net of what it freed; may be below an earlier reading).
pub fn live() -> isize {
    LIVE.with(Cell::get)
}

/// Runs `f` and returns its result with the peak heap of this thread above what was live when
/// it started.
pub fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = live();
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, usize::try_from(PEAK.with(Cell::get) - base).unwrap_or(0))
}
