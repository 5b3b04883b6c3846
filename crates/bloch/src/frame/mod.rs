//! One rotation frame solved on given coupling segments: the beam sets and tilt covers a
//! diffBloch plan froze (`preprocess/coupling.py::build_coupling_segments`, its `Segment`s with
//! `union_hkl` and `covered_tilt_indices`), so a frame can be rebuilt beam for beam from a plan.
//!
//! Each segment solves its beam set at every tilt it covers (orientation O_i = T_i · O, the tilt
//! matrices as the plan gives them); a frame's beams are the union over segments, and
//! I(hkl) = Σ_i I_i(hkl), a beam absent from the segment covering tilt i contributing 0 there —
//! diffBloch's `RefinementEngine._solve_segmented`. Per-tilt coupling is one segment per tilt,
//! union coupling one segment covering every tilt.

mod assemble;
mod real;
pub(crate) mod support;
mod tridiagonal;

use scatterlab_core::InputError;

pub use assemble::{UnionTable, MAX_UNION};
pub use real::{eigen_intensities, fast_intensities, real_part_if_real};
pub use support::SupportTable;
pub use tridiagonal::tridiagonal_intensities;

use crate::beams::{lab_reciprocal_basis, Hkl, Mat3};
use crate::geometry::Optics;
use crate::matrix::{Conventions, MatrixSetup, StructureFactorTable, StructureMatrix};
use crate::pattern::{Method, Pattern};
use crate::solve::{check_thicknesses, intensities, Solver};
use crate::BlochError;

/// A per-tilt solver: intensities `I[thickness][beam]` of a structure matrix; the `&str` names it in errors.
pub type Solve<'a> = dyn Fn(&StructureMatrix, &[f64], &str) -> Result<Vec<Vec<f64>>, BlochError> + 'a;

/// One coupling segment: the beams it solves and the tilts (indices into the frame's
/// orientations) it covers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    /// The beam set (must contain 000), in any order; the matrix follows this order.
    pub hkl: Vec<Hkl>,
    /// The tilts this segment solves.
    pub tilts: Vec<usize>,
}

/// A frame: a crystal's cell seen at a series of tilted orientations, solved on given segments.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Name used in errors.
    pub name: String,
    /// Direct cell matrix, rows a, b, c (Å).
    pub direct: Mat3,
    /// The orientation of each tilt (lab = O_i · crystal Cartesian), e.g. T_i · O.
    pub orientations: Vec<Mat3>,
    /// The segments; together they must cover every tilt exactly once.
    pub segments: Vec<Segment>,
    /// Thicknesses (Å).
    pub thicknesses_a: Vec<f64>,
    /// Absorptive model (the table must carry the absorptive part; expm only).
    pub absorption: bool,
}

impl Frame {
    /// Checks that the segments cover every tilt exactly once, hold 000, and that the
    /// thicknesses are valid; errors name the frame and the segment.
    pub fn validate(&self) -> Result<(), BlochError> {
        check_thicknesses(&self.thicknesses_a)?;
        let mut covered = vec![false; self.orientations.len()];
        for (s, segment) in self.segments.iter().enumerate() {
            let object = || format!("frame {:?}: segment {s}", self.name);
            if !segment.hkl.contains(&[0, 0, 0]) {
                return Err(InputError::new(object(), "its beam set does not contain 000").into());
            }
            for &t in &segment.tilts {
                match covered.get_mut(t) {
                    None => return Err(InputError::new(object(), format!("covers tilt {t} of {}", self.orientations.len())).into()),
                    Some(true) => return Err(InputError::new(object(), format!("covers tilt {t}, which another segment covers")).into()),
                    Some(c) => *c = true,
                }
            }
        }
        if let Some(t) = covered.iter().position(|c| !c) {
            return Err(InputError::new(format!("frame {:?}", self.name), format!("no segment covers tilt {t}")).into());
        }
        Ok(())
    }

    /// The union of the segments' beams, sorted by (h, k, l).
    pub fn union(&self) -> Vec<Hkl> {
        let mut union: Vec<Hkl> = self.segments.iter().flat_map(|s| s.hkl.iter().copied()).collect();
        union.sort_unstable();
        union.dedup();
        union
    }

    /// Every F(g_j − g_i) the segments' matrices need (with 000), sorted by (h, k, l): the
    /// structure-factor support of the frame, for [`SupportTable::compute`]. Marked in a dense
    /// hkl box (a borane frame has 12 million differences but only ~9,000 distinct ones).
    pub fn support(&self) -> Vec<Hkl> {
        let reach: [i32; 3] = std::array::from_fn(|i| 2 * self.segments.iter().flat_map(|s| s.hkl.iter()).map(|h| h[i].saturating_abs()).max().unwrap_or(0));
        let sides = reach.map(|r| 2 * r as usize + 1);
        if sides.iter().try_fold(1_usize, |n, &s| n.checked_mul(s)).is_none_or(|n| n > 1 << 26) {
            // Absurd Miller indices: no dense box, sort the differences instead.
            let mut support: Vec<Hkl> =
                self.segments.iter().flat_map(|s| s.hkl.iter().flat_map(|a| s.hkl.iter().map(move |b| [b[0] - a[0], b[1] - a[1], b[2] - a[2]]))).chain([[0, 0, 0]]).collect();
            support.sort_unstable();
            support.dedup();
            return support;
        }
        let slot = |h: Hkl| (((h[0] + reach[0]) as usize * sides[1]) + (h[1] + reach[1]) as usize) * sides[2] + (h[2] + reach[2]) as usize;
        let mut marked = vec![false; sides.iter().product()];
        marked[slot([0, 0, 0])] = true;
        for segment in &self.segments {
            for a in &segment.hkl {
                for b in &segment.hkl {
                    marked[slot([b[0] - a[0], b[1] - a[1], b[2] - a[2]])] = true;
                }
            }
        }
        // Box order is (h, k, l) lexicographic order.
        let unslot = |i: usize| -> Hkl {
            let (hk, l) = (i / sides[2], i % sides[2]);
            [(hk / sides[1]) as i32 - reach[0], (hk % sides[1]) as i32 - reach[1], l as i32 - reach[2]]
        };
        marked.iter().enumerate().filter(|(_, &m)| m).map(|(i, _)| unslot(i)).collect()
    }

    /// Solves the frame on `table` with `optics` (e.g. [`Optics::with_u0`] for a plan's frozen U0).
    /// The eigen solver takes the real-symmetric path when a matrix is real ([`eigen_intensities`]);
    /// expm is the Padé matrix exponential per thickness, as in [`crate::solve::intensities`].
    pub fn run(&self, table: &dyn StructureFactorTable, optics: &Optics, method: Method) -> Result<Pattern, BlochError> {
        if self.absorption && method.solver == Solver::Eigen {
            return Err(BlochError::Numerical {
                object: format!("frame {:?}", self.name),
                message: "absorptive structure matrices are not Hermitian: use the expm solver".to_owned(),
            });
        }
        let solve = |matrix: &StructureMatrix, thicknesses: &[f64], object: &str| match method.solver {
            Solver::Eigen => eigen_intensities(matrix, thicknesses, object),
            Solver::Expm => intensities(matrix, thicknesses, Solver::Expm, object),
        };
        self.run_with(table, optics, method.conventions, &solve)
    }

    /// [`Frame::run`] with any per-tilt solver `solve(matrix, thicknesses, object)`, e.g.
    /// [`fast_intensities`] (the forward-only tridiagonal path for real A).
    pub fn run_with(&self, table: &dyn StructureFactorTable, optics: &Optics, conventions: Conventions, solve: &Solve<'_>) -> Result<Pattern, BlochError> {
        self.validate()?;
        let union = self.union();
        // F over the union's pairs once, when it fits; else the per-tilt grid lookups.
        let gathered = if union.len() <= MAX_UNION { Some(UnionTable::new(&union, table)) } else { None };
        let n_thick = self.thicknesses_a.len();
        // sums[t][u]: intensity of union beam u at thickness t, summed over tilts.
        let mut sums = vec![vec![0.0; union.len()]; n_thick];
        for (s, segment) in self.segments.iter().enumerate() {
            // Union index of each beam (the union is built from these beams, so every search hits).
            let slots: Vec<usize> = segment
                .hkl
                .iter()
                .map(|h| union.binary_search(h).map_err(|_| InputError::new(format!("frame {:?}: beam {h:?}", self.name), "not in the union")))
                .collect::<Result<_, _>>()?;
            for &t in &segment.tilts {
                let object = format!("frame {:?}, segment {s}, tilt {t}", self.name);
                let basis = lab_reciprocal_basis(&self.direct, &self.orientations[t])?;
                let setup = MatrixSetup { basis: &basis, optics, absorption: self.absorption, conventions };
                let matrix = match &gathered {
                    Some(gathered) => gathered.matrix(&segment.hkl, &slots, &setup)?,
                    None => StructureMatrix::build(&segment.hkl, table, &setup)?,
                };
                let tilt = solve(&matrix, &self.thicknesses_a, &object)?;
                for (sum, row) in sums.iter_mut().zip(&tilt) {
                    slots.iter().zip(row).for_each(|(&u, v)| sum[u] += v);
                }
            }
        }
        let intensities = sums;
        Ok(Pattern { hkl: union, intensities })
    }
}

#[cfg(test)]
mod tests;
