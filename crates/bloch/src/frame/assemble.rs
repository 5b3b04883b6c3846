//! Structure matrices of a frame's tilts from one table of F over the frame's union beams.
//!
//! [`StructureMatrix::build`] looks F(g_j − g_i) up in the hkl grid for every pair of every tilt:
//! 12 million scattered reads for a borane frame (an Ewald shell's beams are far apart in the
//! grid), a quarter of its forward time. Here F(h_b − h_a) is gathered once for every pair of the
//! union (762² for borane), and each tilt's matrix reads a column-ordered sub-block of it. The
//! entries are the same products, in the same order, as `StructureMatrix::build`'s (a unit test
//! checks equality bit for bit).

use faer::Mat;
use num_complex::Complex64;
use scatterlab_core::InputError;

use crate::beams::Hkl;
use crate::matrix::{diagonal, BeamGeometry, MatrixSetup, StructureFactorTable, StructureMatrix};
use crate::BlochError;

/// Largest union gathered whole (4096² complex = 256 MiB would be too much; 2048² = 64 MiB).
pub const MAX_UNION: usize = 2048;

/// F(h_b − h_a) for every pair (a, b) of a frame's union beams (sorted).
pub struct UnionTable {
    f: Mat<Complex64>,
    f000: Complex64,
}

impl UnionTable {
    /// Gathers F for `union` (sorted, deduplicated) from `table`; a difference the table lacks is
    /// an error naming it, as in `StructureMatrix::build`, when a matrix needs it.
    pub fn new(union: &[Hkl], table: &dyn StructureFactorTable) -> Self {
        let n = union.len();
        let mut f = Mat::<Complex64>::zeros(n, n);
        for (b, hb) in union.iter().enumerate() {
            for (a, ha) in union.iter().enumerate() {
                let difference = [hb[0] - ha[0], hb[1] - ha[1], hb[2] - ha[2]];
                // Pairs of beams that never share a segment may lie outside a support table:
                // NaN marks them, and a matrix that uses one is an error (see `matrix`).
                f[(a, b)] = table.value(difference).unwrap_or(Complex64::new(f64::NAN, f64::NAN));
            }
        }
        Self { f, f000: table.f000() }
    }

    /// The structure matrix of `beams` (union indices `slots`) in `setup`: `StructureMatrix::build`'s.
    pub fn matrix(&self, beams: &[Hkl], slots: &[usize], setup: &MatrixSetup<'_>) -> Result<StructureMatrix, BlochError> {
        let BeamGeometry { index_000, k, sg, m } = BeamGeometry::of(beams, setup)?;
        let n = beams.len();
        let p = setup.optics.prefactor;
        let absorptive_u0 = p * self.f000.im;
        let a = Mat::from_fn(n, n, |i, j| {
            if i != j {
                return self.f[(slots[i], slots[j])] * (p * m[j] * m[i]);
            }
            diagonal(setup, k, sg[i], m[i], absorptive_u0)
        });
        if let Some((i, j)) = (0..n).flat_map(|j| (0..n).map(move |i| (i, j))).find(|&(i, j)| a[(i, j)].re.is_nan()) {
            let (hi, hj) = (beams[i], beams[j]);
            let difference = [hj[0] - hi[0], hj[1] - hi[1], hj[2] - hi[2]];
            return Err(InputError::new(
                format!("structure factor F{difference:?} (beams {hi:?} → {hj:?})"),
                "outside the structure-factor grid: the grid radius must reach 2·g_solve",
            )
            .into());
        }
        Ok(StructureMatrix { hkl: beams.to_vec(), a, mii: m, sg, k, index_000, hermitian: !setup.absorption, conventions: setup.conventions })
    }
}
