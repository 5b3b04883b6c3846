//! The structure factors a gradient model reads: for an elastic model F only on the support
//! (every difference h_b − h_a of every tilt's beams, and 000), recomputed with the structure,
//! as diffBloch evaluates only its active rows; for an absorptive model the full grid (its f'
//! needs the grid's absorptive table).

use num_complex::Complex64;
use scatterlab_core::InputError;

use super::frame::FramePlan;
use crate::beams::Hkl;
use crate::frame::SupportTable;
use crate::matrix::StructureFactorTable;
use crate::{BlochError, Crystal, StructureFactors};

/// Largest hkl box (points) the support marking may span.
const MAX_BOX_POINTS: usize = 1 << 26;

/// Every F difference h_b − h_a (a ≠ b) that the frames' matrices read, plus 000, sorted by
/// (h, k, l): marked in a dense hkl box (a borane frame has 125 × 315² pairs; sorting them was
/// slower than the solves), identical consecutive beam sets (union segments) visited once.
pub fn difference_support(frames: &[FramePlan], object: &str) -> Result<Vec<Hkl>, BlochError> {
    let mut reach = [0_i32; 3];
    for h in frames.iter().flat_map(|f| f.beams.iter().flatten()) {
        for (r, x) in reach.iter_mut().zip(h) {
            *r = (*r).max(x.saturating_abs().saturating_mul(2));
        }
    }
    let sides = reach.map(|r| 2 * r as usize + 1);
    let points = sides.iter().try_fold(1_usize, |acc, &s| acc.checked_mul(s)).filter(|&n| n <= MAX_BOX_POINTS);
    let points = points.ok_or_else(|| InputError::new(object, format!("beam differences span an hkl box {sides:?}: too large")))?;
    let slot = |h: Hkl| ((h[0] + reach[0]) as usize * sides[1] + (h[1] + reach[1]) as usize) * sides[2] + (h[2] + reach[2]) as usize;
    let mut marked = vec![false; points];
    marked[slot([0, 0, 0])] = true;
    for frame in frames {
        let mut previous: Option<&Vec<Hkl>> = None;
        for beams in &frame.beams {
            if previous == Some(beams) {
                continue;
            }
            previous = Some(beams);
            for a in beams {
                for b in beams {
                    marked[slot([b[0] - a[0], b[1] - a[1], b[2] - a[2]])] = true;
                }
            }
        }
    }
    let mut support = Vec::new();
    for (i, _) in marked.iter().enumerate().filter(|(_, m)| **m) {
        let l = (i % sides[2]) as i32 - reach[2];
        let k = ((i / sides[2]) % sides[1]) as i32 - reach[1];
        let h = (i / (sides[1] * sides[2])) as i32 - reach[0];
        support.push([h, k, l]);
    }
    Ok(support)
}

/// The structure factors of a gradient model.
#[derive(Debug, Clone)]
pub enum ModelTable {
    /// Elastic F on the frames' support.
    Support(SupportTable),
    /// F (with absorption) on the full grid.
    Grid(StructureFactors),
}

impl ModelTable {
    /// F of `crystal` for `frames`: on their support when elastic, on the grid of radius
    /// `grid_g_max_inv_a` with `absorption`.
    pub fn compute(crystal: &Crystal, frames: &[FramePlan], grid_g_max_inv_a: f64, energy_ev: f64, absorption: bool) -> Result<Self, BlochError> {
        if absorption {
            return Ok(Self::Grid(StructureFactors::compute(crystal, grid_g_max_inv_a, energy_ev, true)?));
        }
        let support = difference_support(frames, &format!("crystal {:?}: frames", crystal.name))?;
        Ok(Self::Support(SupportTable::compute(crystal, &support)?))
    }

    fn table(&self) -> &dyn StructureFactorTable {
        match self {
            Self::Support(t) => t,
            Self::Grid(t) => t,
        }
    }
}

impl StructureFactorTable for ModelTable {
    fn hkl_list(&self) -> &[Hkl] {
        self.table().hkl_list()
    }
    fn value(&self, hkl: Hkl) -> Option<Complex64> {
        self.table().value(hkl)
    }
    fn f000(&self) -> Complex64 {
        self.table().f000()
    }
    fn index_of(&self, hkl: Hkl) -> Option<usize> {
        self.table().index_of(hkl)
    }
    fn value_at(&self, index: usize) -> Option<Complex64> {
        self.table().value_at(index)
    }
    fn dense_values(&self) -> Option<&[Complex64]> {
        self.table().dense_values()
    }
    fn difference_indices(&self, beams: &[Hkl]) -> Result<Vec<u32>, Hkl> {
        self.table().difference_indices(beams)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_support_equals_sorted_pair_differences() {
        let a: Vec<Hkl> = vec![[0, 0, 0], [1, 0, -2], [-3, 2, 1], [2, 2, 2]];
        let b: Vec<Hkl> = vec![[0, 0, 0], [0, -1, 4], [1, 0, -2]];
        let frame = |beams: Vec<Vec<Hkl>>| FramePlan {
            orientation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            tilts: FramePlan::tilts_about_x(&vec![0.0; beams.len()]),
            beams,
            thicknesses: vec![100.0],
        };
        let frames = vec![frame(vec![a.clone(), a.clone(), b.clone()]), frame(vec![b.clone()])];
        let mut expected: Vec<Hkl> = [&a, &b].iter().flat_map(|s| s.iter().flat_map(move |x| s.iter().map(move |y| [y[0] - x[0], y[1] - x[1], y[2] - x[2]]))).collect();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(difference_support(&frames, "test").unwrap(), expected);
    }
}
