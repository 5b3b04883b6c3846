//! Bloch-wave electron diffraction: the dynamical forward model of diffBloch (and abTEM by a
//! convention switch) in f64 on the CPU, with WGSL twins for the batched work.
//!
//! Pipeline: [`crystal`] (CIF → P1 atoms) → structure factors F(g) on the hkl grid →
//! geometry (wavelength, interaction constant, K_n, excitation errors) → beam selection →
//! structure matrix → eigen or matrix-exponential propagation → intensities.
//! Conventions (units Å, Å⁻¹, eV; beam along −z; reciprocal basis without 2π) are those of
//! `CONVENTIONS.md` § Bloch waves.

pub mod beams;
pub mod crystal;
pub mod error;
pub mod euler;
pub mod frame;
pub mod geometry;
pub mod gpu;
pub mod gradient;
pub mod limits;
pub mod matrix;
pub mod pattern;
pub mod propagate;
pub mod refine;
pub mod rocking;
pub mod simulate;
pub mod solve;
pub mod structure_factor;
pub mod tilt_series;
pub mod zone;

pub use crystal::{parse_cif, Atom, Cell, Crystal, Displacement};
pub use error::BlochError;
pub use limits::Limits;
pub use structure_factor::StructureFactors;
