//! ∂F(h)/∂θ for the structural parameters (plan §2).
//!
//! P1 atom j (image of site s by R_j, t_j) contributes c_j(h) = (occ_s/V)·[f(|g|) + i f'(|g|/2, B_j)]
//! ·exp(−2π² hᵀU*_j h)·exp(2πi h·r_j) with U*_j = R_j·U*_s·R_jᵀ, so with q_j = R_jᵀh:
//! ∂c_j/∂x_s·u = 2πi(q_j·u)c_j; ∂(hᵀU*_j h) = q_jᵀ·∂U*_s·q_j; ∂c_j/∂occ = c_j/occ (evaluated
//! without the occupancy factor, so occ = 0 works); f' moves with B_j = 8π²⟨diag U_cart⟩, linear
//! in U. Components that [`StructureFactors`](crate::structure_factor::StructureFactors) snapped to zero (systematic absences) get
//! derivative 0, as diffBloch's `torch.where` gives.

use num_complex::Complex64;
use scatterlab_core::InputError;

use super::params::{structural_direction, Param};
use crate::beams::Hkl;
use crate::crystal::{aniso_matrix, congruence, AsymmetricUnit, Displacement};
use crate::matrix::StructureFactorTable;
use crate::structure_factor::absorptive::absorptive_curve_with_slope;
use crate::structure_factor::lobato::lobato_form_factor;
use crate::BlochError;

/// ∂F(h)/∂θ (Å⁻²) for every parameter of `params` (rows) and every hkl of `support` (columns),
/// at the structure `asu` whose structure factors are `table` (computed with `energy_ev` and
/// `absorption`; used for the snapped zeros). Thickness and orientation rows are zero.
pub fn structure_factor_jvp(
    asu: &AsymmetricUnit,
    table: &dyn StructureFactorTable,
    energy_ev: f64,
    absorption: bool,
    params: &[Param],
    support: &[Hkl],
) -> Result<Vec<Vec<Complex64>>, BlochError> {
    let (crystal, images) = asu.expand();
    let cell = &asu.cell;
    let reciprocal = cell.reciprocal_matrix();
    let volume = cell.volume();
    let d = cell.reciprocal_lengths();
    let two_pi_squared = 2.0 * std::f64::consts::PI.powi(2);
    // |g_h|² and the snapping masks of F.
    let g2: Vec<f64> = support
        .iter()
        .map(|h| {
            let m = h.map(f64::from);
            (0..3).map(|c| (0..3).map(|r| m[r] * reciprocal[r][c]).sum::<f64>().powi(2)).sum()
        })
        .collect();
    let table_values: Vec<Complex64> = support
        .iter()
        .map(|&h| table.value(h).ok_or_else(|| BlochError::from(InputError::new(format!("crystal {:?}: F{h:?}", asu.name), "outside the structure-factor grid"))))
        .collect::<Result<_, _>>()?;
    let s: Vec<f64> = g2.iter().map(|g| g.sqrt() / 2.0).collect();

    let mut out = Vec::with_capacity(params.len());
    for param in params {
        let mut row = vec![Complex64::new(0.0, 0.0); support.len()];
        let Some(site) = param.site() else {
            out.push(row);
            continue;
        };
        let (position_dir, adp_dir) = structural_direction(asu, param)?;
        let site_atom = &asu.sites[site];
        let elastic: Vec<f64> = s.iter().map(|&si| lobato_form_factor(site_atom.z, 2.0 * si).unwrap_or(0.0)).collect();
        // The site-frame tensor direction D·Δ·D of a U_aniso step (U_iso: B·Bᵀ, per unit U).
        let site_direction = match *param {
            Param::Uaniso { .. } => {
                let m = aniso_matrix(adp_dir);
                std::array::from_fn(|i| std::array::from_fn(|j| m[i][j] * d[i] * d[j]))
            }
            Param::Uiso { .. } => congruence(&reciprocal, &[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], &reciprocal),
            _ => [[0.0; 3]; 3],
        };
        for (atom, image) in crystal.atoms.iter().zip(&images).filter(|(_, i)| i.site == site) {
            let rotation = &image.op.rotation;
            let u_star = atom.displacement.u_star(cell);
            // ∂U*_j along the parameter (U_iso is frame-invariant: B·Bᵀ per unit U).
            let du_star = match atom.displacement {
                Displacement::Aniso(_) => congruence(rotation, &site_direction, rotation),
                Displacement::Iso(_) => site_direction,
            };
            let b_iso = atom.b_iso_equivalent(cell);
            let db_iso = cell.b_iso_of_u_star(&du_star);
            let inelastic = if absorption {
                absorptive_curve_with_slope(atom.z, &s, b_iso, energy_ev)
                    .ok_or_else(|| InputError::new(format!("atom {:?}", atom.label), format!("Z = {} has no absorptive factor", atom.z)))?
            } else {
                vec![(0.0, 0.0); support.len()]
            };
            // R_j·u: the image's fractional displacement for a unit site step.
            let moved: [f64; 3] = std::array::from_fn(|i| (0..3).map(|k| rotation[i][k] * position_dir[k]).sum());
            for (i, h) in support.iter().enumerate() {
                let m = h.map(f64::from);
                let quadratic: f64 = (0..3).map(|x| (0..3).map(|y| m[x] * u_star[x][y] * m[y]).sum::<f64>()).sum();
                let dwf = (-two_pi_squared * quadratic).exp();
                let phase = std::f64::consts::TAU * (0..3).map(|k| atom.frac[k] * m[k]).sum::<f64>();
                let (f_abs, df_abs_db) = inelastic[i];
                let factor = Complex64::new(elastic[i], f_abs);
                let base = factor * Complex64::from_polar(dwf / volume, phase);
                let occ = atom.occupancy;
                row[i] += match param {
                    Param::Position { .. } => {
                        let q_dot_u: f64 = (0..3).map(|k| m[k] * moved[k]).sum();
                        Complex64::new(0.0, std::f64::consts::TAU * q_dot_u) * base * occ
                    }
                    Param::Uiso { .. } | Param::Uaniso { .. } => {
                        let dquadratic: f64 = (0..3).map(|x| (0..3).map(|y| m[x] * du_star[x][y] * m[y]).sum::<f64>()).sum();
                        let dfactor = factor * (-two_pi_squared * dquadratic) + Complex64::new(0.0, df_abs_db * db_iso);
                        dfactor * Complex64::from_polar(dwf / volume, phase) * occ
                    }
                    Param::Occupancy { .. } => base,
                    Param::Thickness { .. } | Param::Orientation { .. } => Complex64::new(0.0, 0.0),
                };
            }
        }
        for (value, f) in row.iter_mut().zip(&table_values) {
            // Snapped components are constants (diffBloch's torch.where).
            *value = Complex64::new(if f.re == 0.0 { 0.0 } else { value.re }, if f.im == 0.0 { 0.0 } else { value.im });
        }
        out.push(row);
    }
    Ok(out)
}
