//! Shared pieces of the benchmarks: the peers' benchmark shapes and a robust timer.

pub mod bloch_frames;
pub mod refl_shape;
pub mod ssb_quality;
pub mod timing;
