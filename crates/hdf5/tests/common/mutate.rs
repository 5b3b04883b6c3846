//! Seeded mutation of fixture bytes for the robustness tests (`hdf5/tests/robust.rs` and
//! `stem/tests/robust.rs`, which includes this file by path), and the panic catcher they share.
//!
//! Every case draws from its own generator seeded by (run seed, case number), so a failure
//! report "seed S case N" is replayed exactly by `SCATTERLAB_SEED=S`, whatever the time budget
//! let the run reach.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Bytes at the start of a file where HDF5 puts the superblock and most headers: flips aim here
/// three times out of four, as damage there reaches the most parsing code.
pub const METADATA_SPAN: usize = 16 * 1024;

/// The run seed: `SCATTERLAB_SEED` if set (replay), else a fresh one (the test kit's rule).
pub fn run_seed() -> u64 {
    scatterlab_testkit::seed("robust")
}

/// The time budget: `secs` unless `SCATTERLAB_ROBUST_SECS` asks for a longer soak.
pub fn budget(secs: u64) -> Duration {
    let s = std::env::var("SCATTERLAB_ROBUST_SECS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(secs);
    Duration::from_secs(s)
}

/// The generator of case `case` of run `seed`.
pub fn case_rng(seed: u64, case: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ case.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// A damaged copy of `orig` and what was done to it (for the failure report): 1–4 bytes
/// replaced (random value, one bit flipped, 0x00 or 0xFF), a truncation, or both.
pub fn mutate(orig: &[u8], rng: &mut StdRng) -> (Vec<u8>, String) {
    let mut data = orig.to_vec();
    let mut what = Vec::new();
    let kind = rng.gen_range(0..10);
    if kind < 7 || data.is_empty() {
        for _ in 0..rng.gen_range(1..=4) {
            if data.is_empty() {
                break;
            }
            let at = if rng.gen_bool(0.75) { rng.gen_range(0..data.len().min(METADATA_SPAN)) } else { rng.gen_range(0..data.len()) };
            let old = data[at];
            let new = match rng.gen_range(0..4) {
                0 => rng.gen(),
                1 => old ^ (1 << rng.gen_range(0..8)),
                2 => 0x00,
                _ => 0xFF,
            };
            data[at] = new;
            what.push(format!("byte {at}: {old:#04x} -> {new:#04x}"));
        }
    }
    if kind >= 7 {
        let len = if rng.gen_bool(0.5) { rng.gen_range(0..data.len().clamp(1, METADATA_SPAN)) } else { rng.gen_range(0..data.len().max(1)) };
        data.truncate(len);
        what.push(format!("truncated to {len} of {} bytes", orig.len()));
    }
    (data, what.join(", "))
}

/// Where the last panic happened and what it said (set by the hook [`quiet_panics`] installs).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Replaces the panic hook with one that records the message and location instead of printing
/// it, so a run that finds many panics reports them once, in the final assertion.
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.payload().downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| info.payload().downcast_ref::<String>().cloned()).unwrap_or_default();
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(format!("{msg} at {at}"));
        }
    }));
}

/// Runs `f`, turning a panic into `Err(message and location)`.
pub fn no_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| LAST_PANIC.lock().ok().and_then(|mut l| l.take()).unwrap_or_else(|| "panic".into()))
}

/// Counts of one run, printed per file kind.
#[derive(Default, Debug)]
pub struct Counts {
    /// Cases run.
    pub cases: u64,
    /// Steps that succeeded (open, list, decode of one chunk, …).
    pub ok: u64,
    /// Steps that failed with a typed error naming the file.
    pub typed: u64,
}
