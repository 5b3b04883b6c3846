//! Crystals: unit cell, atoms expanded to P1, and the CIF reader that builds them.

mod cell;
pub(crate) mod cif;
mod elements;
mod sites;
mod spacegroups;
mod symmetry;
#[cfg(test)]
mod tests;
mod validate;
#[cfg(test)]
mod validate_tests;

pub(crate) use cell::{aniso_matrix, congruence};
pub use cell::{Mat3, MIN_VOLUME_FRACTION};
pub use cif::{parse_cif, parse_cif_asymmetric};
pub use elements::{atomic_number, element_symbol};
pub use sites::{AsymmetricUnit, ImageOf};
pub use symmetry::{expand_to_p1, wrap_unit, SymOp, DUPLICATE_TOLERANCE_FRAC};
pub use validate::ADP_EIGENVALUE_TOLERANCE;

/// Unit cell lengths (Å) and angles (degrees), as in CIF `_cell_length_*` / `_cell_angle_*`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Cell {
    /// a, b, c in Å.
    pub lengths: [f64; 3],
    /// α, β, γ in degrees.
    pub angles_deg: [f64; 3],
}

/// Atomic displacement parameters of one site, in Å².
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Displacement {
    /// Isotropic U_iso (Å²).
    Iso(f64),
    /// Anisotropic CIF U_ij (Å²) in the order U11, U22, U33, U12, U13, U23 (the CIF
    /// `_atom_site_aniso_U_*` convention, i.e. relative to the reciprocal-length-scaled basis).
    Aniso([f64; 6]),
}

/// One atom of the P1-expanded structure.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Atom {
    /// Site label from the CIF (shared by all symmetry copies).
    pub label: String,
    /// Atomic number Z (1..=103).
    pub z: u8,
    /// Fractional coordinates, wrapped into [0, 1).
    pub frac: [f64; 3],
    /// Site occupancy (1 when the CIF gives none).
    pub occupancy: f64,
    /// Displacement parameters (for Aniso, already transformed by the symmetry operation).
    pub displacement: Displacement,
}

/// A crystal: its cell and every atom of the unit cell (P1).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Crystal {
    /// Name (the CIF data block, or the key it was given under).
    pub name: String,
    /// The unit cell.
    pub cell: Cell,
    /// All atoms of the unit cell after symmetry expansion.
    pub atoms: Vec<Atom>,
}
