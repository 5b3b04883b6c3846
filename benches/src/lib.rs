//! Shared pieces of the benchmarks: the peers' benchmark shapes and a robust timer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

pub mod bloch_frames;
pub mod refl_shape;
pub mod ssb_quality;
pub mod timing;
