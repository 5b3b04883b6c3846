//! Reverse mode from structure-factor cotangents to the structural parameters (plan §2), one
//! pass over (P1 atom × hkl) whatever the number of parameters: per atom the sums
//! - S_r = Σ_h Im(w_h)·h (positions), Q = Σ_h Re(w_h)·h·hᵀ (ADPs), S_o = Σ_h Re(w_h)
//!   (occupancy), with w_h = 2·conj(F̄_h)·c_h, c_h = (f + i f')·DWF·exp(2πi h·r)/V (no occupancy);
//! - S_B = Σ_h Re(2·conj(F̄_h)·i·∂f'/∂B·DWF·exp(2πi h·r)/V) (f' moves with B when absorptive);
//!
//! then per parameter the chain rule through the image R_j of the site:
//! position ∂L = −2π·occ·S_r·(R_j·u), ADP ∂L = occ·(−2π²·⟨∂U*_j, Q⟩ + ∂B_j·S_B), occupancy S_o.
//! The forward code ([`super::structure_factor::structure_factor_jvp`]) costs P times this.

use num_complex::Complex64;
use scatterlab_core::InputError;

use super::params::{structural_direction, Param};
use crate::beams::Hkl;
use crate::crystal::{aniso_matrix, congruence, AsymmetricUnit, Displacement};
use crate::matrix::StructureFactorTable;
use crate::structure_factor::absorptive::absorptive_curve_with_slope;
use crate::structure_factor::atom_terms::{DebyeWallerCache, PhaseTable};
use crate::structure_factor::lobato::lobato_form_factor;
use crate::BlochError;

/// One atom's sums (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
struct AtomSums {
    position: [f64; 3],
    quadratic: [[f64; 3]; 3],
    occupancy: f64,
    b_iso: f64,
}

/// ∂L/∂θ per parameter of `params` from structure-factor cotangents `f_bar` (dL = 2·Re Σ_h
/// conj(F̄_h)·dF_h + `im_f000_bar`·d Im F(000)) at the structure `asu`, whose structure factors
/// `table` holds (energy `energy_ev`, `absorption`). Components of F that the table snapped to 0
/// are constants (as in the forward code). Thickness and orientation entries are 0.
pub fn structure_factor_vjp(
    asu: &AsymmetricUnit,
    table: &dyn StructureFactorTable,
    energy_ev: f64,
    absorption: bool,
    params: &[Param],
    f_bar: &[(Hkl, Complex64)],
    im_f000_bar: f64,
) -> Result<Vec<f64>, BlochError> {
    let (crystal, images) = asu.expand();
    let cell = &asu.cell;
    let reciprocal = cell.reciprocal_matrix();
    let volume = cell.volume();
    // The cotangents with snapped components removed; d Im F(000) enters as F̄(000) = i·b/2.
    let mut entries: Vec<(Hkl, Complex64)> = Vec::with_capacity(f_bar.len() + 1);
    let mut add = |h: Hkl, bar: Complex64| -> Result<(), BlochError> {
        let f = table.value(h).ok_or_else(|| InputError::new(format!("crystal {:?}: F{h:?}", asu.name), "outside the structure-factor table"))?;
        let bar = Complex64::new(if f.re == 0.0 { 0.0 } else { bar.re }, if f.im == 0.0 { 0.0 } else { bar.im });
        if bar != Complex64::new(0.0, 0.0) {
            entries.push((h, bar));
        }
        Ok(())
    };
    for &(h, bar) in f_bar {
        add(h, bar)?;
    }
    add([0, 0, 0], Complex64::new(0.0, 0.5 * im_f000_bar))?;
    let s: Vec<f64> = entries
        .iter()
        .map(|(m, _)| {
            let m = m.map(f64::from);
            let g: [f64; 3] = std::array::from_fn(|c| (0..3).map(|r| m[r] * reciprocal[r][c]).sum());
            0.5 * (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt()
        })
        .collect();
    let hkl: Vec<Hkl> = entries.iter().map(|(h, _)| *h).collect();
    let half = PhaseTable::half_range(&hkl);
    let mut debye_waller = DebyeWallerCache::default();
    let mut elastic: Vec<(u8, Vec<f64>)> = Vec::new();
    let two_pi_squared = 2.0 * std::f64::consts::PI.powi(2);
    let mut sums = vec![AtomSums::default(); crystal.atoms.len()];
    for (atom, out) in crystal.atoms.iter().zip(sums.iter_mut()) {
        if !elastic.iter().any(|(z, _)| *z == atom.z) {
            elastic.push((atom.z, s.iter().map(|&si| lobato_form_factor(atom.z, 2.0 * si).unwrap_or(0.0)).collect()));
        }
        let Some((_, f)) = elastic.iter().find(|(z, _)| *z == atom.z) else { continue };
        let inelastic = if absorption {
            let b = atom.b_iso_equivalent(cell);
            Some(
                absorptive_curve_with_slope(atom.z, &s, b, energy_ev)
                    .ok_or_else(|| InputError::new(format!("atom {:?}", atom.label), format!("Z = {} has no absorptive factor", atom.z)))?,
            )
        } else {
            None
        };
        let dwf = debye_waller.get(&atom.displacement.u_star(cell), &hkl);
        let phases = PhaseTable::new(atom.frac, half);
        let mut acc = AtomSums::default();
        for (i, ((h, bar), &dwf)) in entries.iter().zip(dwf).enumerate() {
            let m = h.map(f64::from);
            let phase = phases.at(*h) * (dwf / volume);
            let weighted = 2.0 * bar.conj() * phase;
            let (f_abs, slope) = inelastic.as_ref().map_or((0.0, 0.0), |v| v[i]);
            let w = weighted * Complex64::new(f[i], f_abs);
            for (p, x) in acc.position.iter_mut().zip(m) {
                *p += w.im * x;
            }
            for x in 0..3 {
                for y in x..3 {
                    acc.quadratic[x][y] += w.re * m[x] * m[y];
                }
            }
            acc.occupancy += w.re;
            // Re(i·slope·weighted) = −slope·Im(weighted).
            acc.b_iso -= slope * weighted.im;
        }
        for x in 0..3 {
            for y in 0..x {
                acc.quadratic[x][y] = acc.quadratic[y][x];
            }
        }
        *out = acc;
    }
    let d = cell.reciprocal_lengths();
    let identity = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    params
        .iter()
        .map(|param| {
            let Some(site) = param.site() else { return Ok(0.0) };
            let (position_dir, adp_dir) = structural_direction(asu, param)?;
            let site_direction = match *param {
                Param::Uaniso { .. } => {
                    let m = aniso_matrix(adp_dir);
                    std::array::from_fn(|i| std::array::from_fn(|j| m[i][j] * d[i] * d[j]))
                }
                Param::Uiso { .. } => congruence(&reciprocal, &identity, &reciprocal),
                _ => [[0.0; 3]; 3],
            };
            let mut total = 0.0;
            for ((atom, image), acc) in crystal.atoms.iter().zip(&images).zip(&sums).filter(|((_, i), _)| i.site == site) {
                let rotation = &image.op.rotation;
                total += match param {
                    Param::Position { .. } => {
                        let moved: [f64; 3] = std::array::from_fn(|i| (0..3).map(|k| rotation[i][k] * position_dir[k]).sum());
                        -std::f64::consts::TAU * atom.occupancy * (0..3).map(|k| acc.position[k] * moved[k]).sum::<f64>()
                    }
                    Param::Uiso { .. } | Param::Uaniso { .. } => {
                        let du_star = match atom.displacement {
                            Displacement::Aniso(_) => congruence(rotation, &site_direction, rotation),
                            Displacement::Iso(_) => site_direction,
                        };
                        let contraction: f64 = (0..3).map(|x| (0..3).map(|y| du_star[x][y] * acc.quadratic[x][y]).sum::<f64>()).sum();
                        atom.occupancy * (-two_pi_squared * contraction + cell.b_iso_of_u_star(&du_star) * acc.b_iso)
                    }
                    Param::Occupancy { .. } => acc.occupancy,
                    Param::Thickness { .. } | Param::Orientation { .. } => 0.0,
                };
            }
            Ok(total)
        })
        .collect()
}
