//! Electron structure factors F(g) on the full hkl grid |g| ≤ g_max (diffBloch conventions).
//!
//! F(h) = (1/V) Σ_atoms [f(|g|) + i f'(|g|/2, B_iso, E)] · exp(−2π² hᵀU*h) · occ · exp(2πi h·r)
//! with f the Lobato–Van Dyck factor ([`lobato`]), f' the absorptive factor ([`absorptive`],
//! only with absorption), U* the fractional-frame displacement tensor
//! ([`crate::Displacement::u_star`]); F in Å⁻² (f in Å over V in Å³). As in diffBloch, each
//! component of the atom sum whose magnitude is below 1e-12 Å is set to exactly 0, so that
//! systematic absences come out as clean zeros.

pub mod absorptive;
pub(crate) mod atom_terms;
pub mod lobato;

use num_complex::Complex64;
use scatterlab_core::InputError;

use crate::limits::Limits;
use crate::{BlochError, Crystal};
use absorptive::absorptive_curve;
use atom_terms::{DebyeWallerCache, PhaseTable};
use lobato::lobato_form_factor;

/// Components of the atom sum below this (Å) are snapped to 0 (diffBloch `zero_threshold`).
const ZERO_THRESHOLD: f64 = 1e-12;

/// Structure factors of one crystal on the hkl grid |g| ≤ g_max.
#[derive(Debug, Clone, PartialEq)]
pub struct StructureFactors {
    /// Every tabulated hkl (see [`StructureFactors::hkl`] for the order).
    hkl: Vec<[i32; 3]>,
    /// F of each entry of `hkl` (Å⁻²).
    values: Vec<Complex64>,
    /// max |h|, |k|, |l| of the box the grid was cut from.
    half_range: [i32; 3],
    /// Dense (2m+1)³ box → index into `hkl` (u32::MAX outside the sphere).
    index: Vec<u32>,
    /// The radius the grid was built for (Å⁻¹).
    g_max_inv_a: f64,
}

/// 0, 1, …, m, −m, …, −1: numpy `fftfreq(2m+1, 1/(2m+1))`, diffBloch's per-axis order.
fn fft_order(m: i32) -> impl Iterator<Item = i32> {
    (0..=m).chain(-m..0)
}

fn invalid(crystal: &Crystal, what: &str, problem: String) -> BlochError {
    InputError::new(format!("crystal {:?}: {what}", crystal.name), problem).into()
}

impl StructureFactors {
    /// F(g) in Å⁻² for every hkl with |g| ≤ `g_max_inv_a` (no other cutoff), for electrons of
    /// `energy_ev` (used only by absorption); `absorption` adds i·f' to every atom's factor.
    /// The grid is held to the default [`Limits`]; see [`StructureFactors::compute_within`].
    pub fn compute(crystal: &Crystal, g_max_inv_a: f64, energy_ev: f64, absorption: bool) -> Result<Self, BlochError> {
        Self::compute_within(crystal, g_max_inv_a, energy_ev, absorption, &Limits::default())
    }

    /// [`StructureFactors::compute`] with the grid's hkl box held to `limits.max_grid_points`
    /// (checked before anything is allocated).
    pub fn compute_within(crystal: &Crystal, g_max_inv_a: f64, energy_ev: f64, absorption: bool, limits: &Limits) -> Result<Self, BlochError> {
        if !(g_max_inv_a.is_finite() && g_max_inv_a >= 0.0) {
            return Err(invalid(crystal, "structure-factor g_max", format!("{g_max_inv_a} 1/A (must be finite and >= 0)")));
        }
        if !(energy_ev.is_finite() && energy_ev > 0.0) {
            return Err(invalid(crystal, "beam energy", format!("{energy_ev} eV (must be positive)")));
        }
        let cell = &crystal.cell;
        cell.validate().map_err(|m| invalid(crystal, "cell", m))?;
        for atom in &crystal.atoms {
            let finite = atom.frac.iter().all(|x| x.is_finite()) && atom.occupancy.is_finite();
            let z_ok = lobato::lobato_coefficients(atom.z).is_some();
            let u_ok = match atom.displacement {
                crate::Displacement::Iso(u) => u.is_finite(),
                crate::Displacement::Aniso(u) => u.iter().all(|x| x.is_finite()),
            };
            if !(finite && z_ok && u_ok) {
                return Err(invalid(crystal, &format!("atom {:?}", atom.label), format!("Z = {} (1..=103), non-finite position, occupancy or displacement", atom.z)));
            }
        }
        let reciprocal = cell.reciprocal_matrix();
        let volume = cell.volume();
        let lengths = cell.reciprocal_lengths();
        // Saturating casts: an absurd ratio becomes i32::MAX, which the grid limit then rejects.
        let half_range = lengths.map(|d| (g_max_inv_a / d).ceil() as i32);
        let sides = half_range.map(|m| 2 * i64::from(m) + 1);
        limits.check_grid(sides, &format!("crystal {:?}: structure-factor grid", crystal.name), g_max_inv_a)?;

        // The grid in diffBloch's `make_hkl_grid` order, with |g| per entry.
        let mut hkl = Vec::new();
        let mut g_len = Vec::new();
        for h in fft_order(half_range[0]) {
            for k in fft_order(half_range[1]) {
                for l in fft_order(half_range[2]) {
                    let m = [h, k, l].map(f64::from);
                    let g: [f64; 3] = std::array::from_fn(|j| m[0] * reciprocal[0][j] + m[1] * reciprocal[1][j] + m[2] * reciprocal[2][j]);
                    let len = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
                    if len <= g_max_inv_a {
                        hkl.push([h, k, l]);
                        g_len.push(len);
                    }
                }
            }
        }
        let mut index = vec![u32::MAX; sides.iter().product::<i64>() as usize];
        let box_index = |[h, k, l]: [i32; 3]| -> usize {
            let [mh, mk, ml] = half_range.map(i64::from);
            let (h, k, l) = (i64::from(h) + mh, i64::from(k) + mk, i64::from(l) + ml);
            ((h * sides[1] + k) * sides[2] + l) as usize
        };
        for (i, &m) in hkl.iter().enumerate() {
            index[box_index(m)] = i as u32;
        }

        let sums = atom_sum(crystal, &hkl, &g_len, energy_ev, absorption);
        let snap = |x: f64| if x.abs() >= ZERO_THRESHOLD { x } else { 0.0 };
        let values = sums.into_iter().map(|f| Complex64::new(snap(f.re), snap(f.im)) / volume).collect();
        Ok(Self { hkl, values, half_range, index, g_max_inv_a })
    }

    /// F(hkl) in Å⁻², or `None` when hkl lies outside the sphere |g| ≤ g_max.
    pub fn get(&self, hkl: [i32; 3]) -> Option<Complex64> {
        self.values.get(self.index_of(hkl)?).copied()
    }

    /// Position of `hkl` in [`StructureFactors::hkl`], or `None` outside the sphere.
    pub fn index_of(&self, hkl: [i32; 3]) -> Option<usize> {
        if (0..3).any(|i| hkl[i].unsigned_abs() > self.half_range[i].unsigned_abs()) {
            return None;
        }
        let sides = self.half_range.map(|m| 2 * i64::from(m) + 1);
        let [h, k, l] = [0, 1, 2].map(|i| i64::from(hkl[i]) + i64::from(self.half_range[i]));
        let slot = *self.index.get(((h * sides[1] + k) * sides[2] + l) as usize)?;
        (slot != u32::MAX).then_some(slot as usize)
    }

    /// [`crate::matrix::StructureFactorTable::difference_indices`] through the dense index.
    pub(crate) fn box_difference_indices(&self, beams: &[[i32; 3]]) -> Result<Vec<u32>, [i32; 3]> {
        crate::frame::support::box_difference_indices(self.half_range, &self.index, beams)
    }

    /// Every tabulated hkl, in diffBloch's `make_hkl_grid` order: h, then k, then l (l fastest),
    /// each running 0, 1, …, m, −m, …, −1, keeping those with |g| ≤ g_max. `hkl()[0]` = 000.
    pub fn hkl(&self) -> &[[i32; 3]] {
        &self.hkl
    }

    /// F of each entry of [`StructureFactors::hkl`], same order (Å⁻²).
    pub fn values(&self) -> &[Complex64] {
        &self.values
    }

    /// F(000) (Å⁻²): Σ occ·f(0)/V, plus i·Σ occ·f'(0)/V with absorption.
    pub fn f000(&self) -> Complex64 {
        self.get([0, 0, 0]).unwrap_or_default()
    }

    /// The grid radius (Å⁻¹) this table was computed for.
    pub fn g_max_inv_a(&self) -> f64 {
        self.g_max_inv_a
    }

    /// Number of tabulated reflections.
    pub fn len(&self) -> usize {
        self.hkl.len()
    }

    /// Whether the table is empty (never: 000 is always tabulated).
    pub fn is_empty(&self) -> bool {
        self.hkl.is_empty()
    }
}

/// Σ_atoms (f + i f')·DWF·occ·exp(2πi h·r) per hkl (Å), before division by V.
fn atom_sum(crystal: &Crystal, hkl: &[[i32; 3]], g_len: &[f64], energy_ev: f64, absorption: bool) -> Vec<Complex64> {
    let cell = &crystal.cell;
    let mut sums = vec![Complex64::new(0.0, 0.0); hkl.len()];
    // Form factors depend on Z only, absorptive ones on (Z, B_iso): computed once per species.
    let mut elastic: Vec<(u8, Vec<f64>)> = Vec::new();
    let mut inelastic: Vec<((u8, u64), Vec<f64>)> = Vec::new();
    let s: Vec<f64> = if absorption { g_len.iter().map(|g| g / 2.0).collect() } else { Vec::new() };
    let mut debye_waller = DebyeWallerCache::default();
    let half = PhaseTable::half_range(hkl);
    for atom in &crystal.atoms {
        if !elastic.iter().any(|(z, _)| *z == atom.z) {
            let f = g_len.iter().map(|&g| lobato_form_factor(atom.z, g).unwrap_or(0.0)).collect();
            elastic.push((atom.z, f));
        }
        let Some((_, f)) = elastic.iter().find(|(z, _)| *z == atom.z) else { continue };
        let f_abs = if absorption {
            let key = (atom.z, atom.b_iso_equivalent(cell).to_bits());
            if !inelastic.iter().any(|(k, _)| *k == key) {
                let curve = absorptive_curve(atom.z, &s, f64::from_bits(key.1), energy_ev).unwrap_or_default();
                inelastic.push((key, curve));
            }
            inelastic.iter().find(|(k, _)| *k == key).map(|(_, c)| c.as_slice())
        } else {
            None
        };
        let u = atom.displacement.u_star(cell);
        let dwf = debye_waller.get(&u, hkl);
        let phases = PhaseTable::new(atom.frac, half);
        for (i, (m, sum)) in hkl.iter().zip(sums.iter_mut()).enumerate() {
            let factor = Complex64::new(f[i], f_abs.map_or(0.0, |c| c[i])) * (dwf[i] * atom.occupancy);
            *sum += factor * phases.at(*m);
        }
    }
    sums
}
