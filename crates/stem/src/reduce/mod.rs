//! 4D-STEM reductions on the CPU (the f64/u64 reference every GPU kernel is held to): virtual
//! detectors as exact integer sums, the sum/mean/max diffraction patterns and total intensity,
//! centre of mass — all from one read of each frame ([`FusedPass`]) — then the probe found from
//! the mean pattern ([`auto_probe`]), DPC rotation ([`dpc`]), iDPC by Fourier integration
//! ([`idpc`]) and display mapping ([`display`]).
//!
//! Conventions (CONVENTIONS.md → 4D-STEM): `I[scan_row, scan_col, det_row, det_col]`, `(row, col)`
//! order everywhere, pixel centres at integer indices, a detector pixel belongs to an annulus when
//! `inner ≤ d ≤ outer` (closed), `d` measured from the beam centre in pixels.

pub mod colormap;
pub mod detector;
pub mod display;
pub mod dpc;
mod fft2;
pub mod finish;
pub mod fused;
pub mod idpc;
pub mod partial;
pub mod pipeline;
pub mod probe;
pub mod resident;

pub use detector::{Annulus, DetectorShape, Runs, VirtualDetector};
pub use dpc::{center_of_mass, find_rotation, Rotation, RotationOptions, VectorField};
pub use finish::{finish, needs_probe, resolve_geometry, Geometry};
pub use fused::{FusedPass, FusedResult};
pub use idpc::{idpc_physical, idpc_quantem};
pub use partial::{merge, reduce_range, Partial};
pub use pipeline::{reduce, reduce_pausing, Pause, Products, RadiusUnit, ReduceDevice, ReduceOptions, ReduceRecord};
pub use probe::{auto_probe, sample_probe, Probe, PROBE_SAMPLE_FRAMES};
pub use resident::{detector_images, DetectorImages};

/// A reduction's input was unusable; the message names the object and the problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{object}: {problem}")]
pub struct ReduceError {
    /// What was wrong (e.g. "virtual detector 'adf'", "scan shape").
    pub object: String,
    /// Why.
    pub problem: String,
}

impl ReduceError {
    /// An error about `object`.
    pub fn new(object: impl Into<String>, problem: impl Into<String>) -> Self {
        ReduceError { object: object.into(), problem: problem.into() }
    }
}
