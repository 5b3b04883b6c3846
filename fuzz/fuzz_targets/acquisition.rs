//! libFuzzer entry of [`scatterlab_fuzz_targets::acquisition`]: any panic, abort, out-of-memory or timeout is a bug.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| scatterlab_fuzz_targets::acquisition(data));
