//! Structure factors on a frame's support only (the differences g_j − g_i its matrices use), as
//! diffBloch's `compact_structure_factors` evaluates only the active rows of its grid: a borane
//! frame needs ~10 % of the 2·g_max sphere.
//!
//! The value of each entry is [`crate::StructureFactors`]'s formula, term for term (Lobato f per
//! species, exp(−2π² hᵀU*h), occupancy, exp(2πi h·r), components below 1e-12 Å snapped to 0,
//! divided by V), without absorption (the benchmark frames are elastic).

use num_complex::Complex64;
use scatterlab_core::InputError;

use crate::beams::Hkl;
use crate::matrix::StructureFactorTable;
use crate::structure_factor::atom_terms::{DebyeWallerCache, PhaseTable};
use crate::structure_factor::lobato::{lobato_coefficients, lobato_form_factor};
use crate::{BlochError, Crystal};

/// Components of the atom sum below this (Å) are set to 0, as in [`crate::StructureFactors`].
const ZERO_THRESHOLD: f64 = 1e-12;
/// Largest hkl box the dense index may span (points).
const MAX_BOX_POINTS: usize = 1 << 26;

/// Elastic structure factors F(hkl) (Å⁻²) on a given list of hkl, with a dense index for the
/// N² lookups of matrix assembly.
#[derive(Debug, Clone, PartialEq)]
pub struct SupportTable {
    hkl: Vec<Hkl>,
    values: Vec<Complex64>,
    half_range: [i32; 3],
    index: Vec<u32>,
}

impl SupportTable {
    /// F of `crystal` at every hkl of `support` (000 is added when missing; duplicates kept once).
    pub fn compute(crystal: &Crystal, support: &[Hkl]) -> Result<Self, BlochError> {
        let mut hkl: Vec<Hkl> = support.to_vec();
        hkl.push([0, 0, 0]);
        hkl.sort_unstable();
        hkl.dedup();
        let half_range: [i32; 3] = std::array::from_fn(|i| hkl.iter().map(|h| h[i].saturating_abs()).max().unwrap_or(0));
        let sides = half_range.map(|m| 2 * m as usize + 1);
        if sides.iter().try_fold(1_usize, |acc, &s| acc.checked_mul(s)).is_none_or(|n| n > MAX_BOX_POINTS) {
            return Err(InputError::new(format!("crystal {:?}: support", crystal.name), format!("hkl box {sides:?} is too large")).into());
        }
        let cell = &crystal.cell;
        cell.validate().map_err(|m| InputError::new(format!("crystal {:?}: cell", crystal.name), m))?;
        for atom in &crystal.atoms {
            if lobato_coefficients(atom.z).is_none() || !atom.frac.iter().all(|x| x.is_finite()) || !atom.occupancy.is_finite() {
                return Err(InputError::new(format!("crystal {:?}: atom {:?}", crystal.name, atom.label), "Z outside 1..=103 or a non-finite position/occupancy").into());
            }
        }
        let reciprocal = cell.reciprocal_matrix();
        let g_len: Vec<f64> = hkl
            .iter()
            .map(|m| {
                let h = m.map(f64::from);
                let g: [f64; 3] = std::array::from_fn(|j| h[0] * reciprocal[0][j] + h[1] * reciprocal[1][j] + h[2] * reciprocal[2][j]);
                (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt()
            })
            .collect();
        let mut sums = vec![Complex64::new(0.0, 0.0); hkl.len()];
        let mut species: Vec<(u8, Vec<f64>)> = Vec::new();
        let mut debye_waller = DebyeWallerCache::default();
        for atom in &crystal.atoms {
            if !species.iter().any(|(z, _)| *z == atom.z) {
                species.push((atom.z, g_len.iter().map(|&g| lobato_form_factor(atom.z, g).unwrap_or(0.0)).collect()));
            }
            let Some((_, f)) = species.iter().find(|(z, _)| *z == atom.z) else { continue };
            let dwf = debye_waller.get(&atom.displacement.u_star(cell), &hkl);
            let phases = PhaseTable::new(atom.frac, half_range);
            for (((m, sum), &f), &dwf) in hkl.iter().zip(sums.iter_mut()).zip(f).zip(dwf) {
                *sum += phases.at(*m) * (f * (dwf * atom.occupancy));
            }
        }
        let volume = cell.volume();
        let snap = |x: f64| if x.abs() >= ZERO_THRESHOLD { x } else { 0.0 };
        let values = sums.into_iter().map(|f| Complex64::new(snap(f.re), snap(f.im)) / volume).collect();
        let mut index = vec![u32::MAX; sides.iter().product()];
        for (i, m) in hkl.iter().enumerate() {
            if let Some(slot) = box_slot(half_range, *m) {
                index[slot] = i as u32;
            }
        }
        Ok(Self { hkl, values, half_range, index })
    }

    /// F of each entry of [`StructureFactorTable::hkl_list`] (sorted by (h, k, l)), Å⁻².
    pub fn values(&self) -> &[Complex64] {
        &self.values
    }
}

/// Position of `hkl` in the dense box of half-widths `half_range` (all ≥ 0), or `None` outside it.
/// Written out per axis: matrix assembly calls it N² times per tilt.
#[inline]
fn box_slot(half_range: [i32; 3], hkl: Hkl) -> Option<usize> {
    let [rh, rk, rl] = half_range;
    let [h, k, l] = hkl;
    if h < -rh || h > rh || k < -rk || k > rk || l < -rl || l > rl {
        return None;
    }
    let (side_k, side_l) = ((2 * rk + 1) as usize, (2 * rl + 1) as usize);
    Some(((h + rh) as usize * side_k + (k + rk) as usize) * side_l + (l + rl) as usize)
}

/// [`StructureFactorTable::difference_indices`] for a table with a dense index over the box of
/// half-widths `half_range` (laid out h, k, l with l fastest; `u32::MAX` where not tabulated).
/// When every difference lies in the box (the beams' spread per axis ≤ its half-width), slot(h_b
/// − h_a) = slot(h_b) − slot(h_a) + slot(000) and the loop is one load per pair (the N² lookups
/// of a borane matrix were a fifth of its gradient); otherwise per-pair checks.
pub(crate) fn box_difference_indices(half_range: [i32; 3], index: &[u32], beams: &[Hkl]) -> Result<Vec<u32>, Hkl> {
    let spread_fits = (0..3).all(|i| {
        let (lo, hi) = beams.iter().fold((i32::MAX, i32::MIN), |(lo, hi), h| (lo.min(h[i]), hi.max(h[i])));
        beams.is_empty() || i64::from(hi) - i64::from(lo) <= i64::from(half_range[i])
    });
    let mut out = Vec::with_capacity(beams.len() * beams.len());
    if !spread_fits {
        for b in beams {
            for a in beams {
                let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
                let slot = box_slot(half_range, d).and_then(|s| index.get(s)).filter(|&&i| i != u32::MAX);
                out.push(*slot.ok_or(d)?);
            }
        }
        return Ok(out);
    }
    let (side_k, side_l) = (2 * i64::from(half_range[1]) + 1, 2 * i64::from(half_range[2]) + 1);
    let linear: Vec<i64> = beams.iter().map(|h| (i64::from(h[0]) * side_k + i64::from(h[1])) * side_l + i64::from(h[2])).collect();
    let center = box_slot(half_range, [0, 0, 0]).map_or(0, |c| c as i64);
    for (b, &lb) in linear.iter().enumerate() {
        let base = center + lb;
        out.extend(linear.iter().map(|&la| index.get((base - la) as usize).copied().unwrap_or(u32::MAX)));
        if let Some(a) = out[b * beams.len()..].iter().position(|&i| i == u32::MAX) {
            let (hb, ha) = (beams[b], beams[a]);
            return Err([hb[0] - ha[0], hb[1] - ha[1], hb[2] - ha[2]]);
        }
    }
    Ok(out)
}

impl StructureFactorTable for SupportTable {
    fn hkl_list(&self) -> &[Hkl] {
        &self.hkl
    }
    fn value(&self, hkl: Hkl) -> Option<Complex64> {
        self.values.get(self.index_of(hkl)?).copied()
    }
    fn f000(&self) -> Complex64 {
        self.value([0, 0, 0]).unwrap_or_default()
    }
    fn index_of(&self, hkl: Hkl) -> Option<usize> {
        let slot = *self.index.get(box_slot(self.half_range, hkl)?)?;
        (slot != u32::MAX).then_some(slot as usize)
    }
    fn value_at(&self, index: usize) -> Option<Complex64> {
        self.values.get(index).copied()
    }
    fn dense_values(&self) -> Option<&[Complex64]> {
        Some(&self.values)
    }
    fn difference_indices(&self, beams: &[Hkl]) -> Result<Vec<u32>, Hkl> {
        box_difference_indices(self.half_range, &self.index, beams)
    }
}
