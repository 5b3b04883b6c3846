//! The frozen-plan gradient model: a structure (asymmetric unit), optics and beam sets frozen at
//! the start model, and frames (static or rocking) with their thicknesses; intensities, the
//! forward-mode Jacobian and the reverse-mode gradient of a scalar loss (eigen path for
//! Hermitian matrices, Taylor path for absorptive ones or on request).
//!
//! Rows are (frame, thickness index, beam) with each frame's beams the sorted union over its
//! tilts, intensities summed over tilts (a beam absent at a tilt contributes 0 there), as
//! [`crate::rocking`] reports them.

use std::collections::HashMap;

use num_complex::Complex64;
use scatterlab_core::InputError;

use super::directions::{tilt_directions, TiltDirections};
use super::frame::{FramePlan, TiltSolve};
use super::matrix::{matrix_vjp, TiltGeometry};
use super::params::{displaced, Param};
use super::structure_factor::structure_factor_jvp;
use super::structure_factor_vjp::structure_factor_vjp;
use super::support::ModelTable;
use crate::beams::Hkl;
use crate::crystal::{AsymmetricUnit, Displacement};
use crate::geometry::Optics;
use crate::matrix::StructureFactorTable;
use crate::BlochError;

/// A Bloch-wave model differentiable in its structural, thickness and orientation parameters.
#[derive(Debug, Clone)]
pub struct GradientModel {
    asu: AsymmetricUnit,
    optics: Optics,
    frames: Vec<FramePlan>,
    grid_g_max_inv_a: f64,
    absorption: bool,
    taylor: bool,
    table: ModelTable,
}

impl GradientModel {
    /// A model of `asu` with frozen `optics` (K_n, prefactor) and frame plans. Elastic models
    /// evaluate F only where the frames' matrices read it; absorptive ones (`absorption`: every
    /// tilt then goes through the Taylor path) tabulate F out to `grid_g_max_inv_a` (≥ 2·g_solve).
    pub fn new(asu: AsymmetricUnit, optics: Optics, frames: Vec<FramePlan>, grid_g_max_inv_a: f64, absorption: bool) -> Result<Self, BlochError> {
        let (crystal, _) = asu.expand();
        let table = ModelTable::compute(&crystal, &frames, grid_g_max_inv_a, optics.energy_ev, absorption)?;
        Ok(Self { asu, optics, frames, grid_g_max_inv_a, absorption, taylor: false, table })
    }

    /// The same model solved by the Taylor path also where A is Hermitian (`taylor` true), e.g.
    /// to cross-check the eigen path.
    pub fn with_taylor(mut self, taylor: bool) -> Self {
        self.taylor = taylor;
        self
    }

    /// The structure.
    pub fn asymmetric_unit(&self) -> &AsymmetricUnit {
        &self.asu
    }

    /// The frame plans.
    pub fn frames(&self) -> &[FramePlan] {
        &self.frames
    }

    /// The same plan moved by `step` along `param` (structure re-tabulated; optics and beam sets
    /// kept): finite differences and refinement steps.
    pub fn displaced(&self, param: &Param, step: f64) -> Result<Self, BlochError> {
        let mut frames = self.frames.clone();
        match *param {
            Param::Thickness { frame } => self.frame_mut(&mut frames, frame)?.shift_thickness(step),
            Param::Orientation { frame, axis } => self.frame_mut(&mut frames, frame)?.rotate(axis, step)?,
            _ => {}
        }
        let asu = displaced(&self.asu, param, step)?;
        Ok(Self::new(asu, self.optics, frames, self.grid_g_max_inv_a, self.absorption)?.with_taylor(self.taylor))
    }

    fn frame_mut<'f>(&self, frames: &'f mut [FramePlan], frame: usize) -> Result<&'f mut FramePlan, BlochError> {
        let count = frames.len();
        frames.get_mut(frame).ok_or_else(|| InputError::new(format!("frame {frame}"), format!("out of range ({count} frames)")).into())
    }

    /// Every free parameter: per site its free position directions, U_iso or free U_aniso
    /// directions and occupancy, then per frame its thickness and three orientation angles.
    pub fn all_params(&self) -> Result<Vec<Param>, BlochError> {
        let mut params = Vec::new();
        for (site, atom) in self.asu.sites.iter().enumerate() {
            params.extend((0..self.asu.position_basis(site)?.len()).map(|dir| Param::Position { site, dir }));
            match atom.displacement {
                Displacement::Iso(_) => params.push(Param::Uiso { site }),
                Displacement::Aniso(_) => params.extend((0..self.asu.adp_basis(site)?.len()).map(|dir| Param::Uaniso { site, dir })),
            }
            params.push(Param::Occupancy { site });
        }
        for frame in 0..self.frames.len() {
            params.push(Param::Thickness { frame });
            params.extend((0..3).map(|axis| Param::Orientation { frame, axis }));
        }
        Ok(params)
    }

    /// The rows (frame, thickness index, hkl), in the order of every flat output.
    pub fn rows(&self) -> Vec<(usize, usize, Hkl)> {
        let mut rows = Vec::new();
        for (f, frame) in self.frames.iter().enumerate() {
            let union = frame.union();
            for t in 0..frame.thicknesses.len() {
                rows.extend(union.iter().map(|&h| (f, t, h)));
            }
        }
        rows
    }

    /// The solved tilts of frame `frame` (eigendecompositions and geometry).
    pub fn solve_frame(&self, frame: usize) -> Result<Vec<TiltSolve>, BlochError> {
        let plan = self.frames.get(frame).ok_or_else(|| InputError::new(format!("frame {frame}"), "out of range"))?;
        plan.solve(&self.asu.cell, &self.table, &self.optics, self.absorption, self.taylor, &format!("crystal {:?}, frame {frame}", self.asu.name))
    }

    /// The structure matrix and geometry of tilt `index` of frame `frame`, without a propagator.
    pub fn tilt_geometry(&self, frame: usize, index: usize) -> Result<TiltGeometry, BlochError> {
        let plan = self.frames.get(frame).ok_or_else(|| InputError::new(format!("frame {frame}"), "out of range"))?;
        plan.tilt_geometry(index, &self.asu.cell, &self.table, &self.optics, self.absorption, &format!("crystal {:?}, frame {frame}", self.asu.name))
    }

    /// Im F(000) of the model's table (the absorptive diagonal's directions read it).
    pub(crate) fn im_f000(&self) -> f64 {
        self.table.f000().im
    }

    /// Walks every tilt of every frame (solved one at a time) with the flat row offset of its
    /// frame, the width of its union and, per beam of the tilt, the position of that beam in the union.
    fn for_each_tilt(&self, mut visit: impl FnMut(usize, usize, usize, &FramePlan, &TiltSolve, &[usize]) -> Result<(), BlochError>) -> Result<(), BlochError> {
        let mut offset = 0;
        for (f, plan) in self.frames.iter().enumerate() {
            let union = plan.union();
            let object = format!("crystal {:?}, frame {f}", self.asu.name);
            for i in 0..plan.tilts.len() {
                let tilt = plan.solve_tilt(i, &self.asu.cell, &self.table, &self.optics, self.absorption, self.taylor, &object)?;
                let positions: Vec<usize> = tilt.geometry.matrix.hkl.iter().map(|h| union.binary_search(h).unwrap_or(0)).collect();
                visit(f, offset, union.len(), plan, &tilt, &positions)?;
            }
            offset += union.len() * plan.thicknesses.len();
        }
        Ok(())
    }

    /// Intensities, one per [`GradientModel::rows`] entry.
    pub fn intensities(&self) -> Result<Vec<f64>, BlochError> {
        let mut out = vec![0.0; self.rows().len()];
        self.for_each_tilt(|_, offset, width, plan, tilt, positions| {
            for (t, row) in tilt.propagator.amplitudes(&plan.thicknesses)?.iter().enumerate() {
                for (b, psi) in row.iter().enumerate() {
                    out[offset + t * width + positions[b]] += psi.norm_sqr();
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// ∂F/∂θ of the structural `params` on every F difference the plan reads.
    pub(crate) fn structure_factor_directions(&self, params: &[Param]) -> Result<HashMap<Hkl, Vec<Complex64>>, BlochError> {
        let support = super::support::difference_support(&self.frames, &format!("crystal {:?}: frames", self.asu.name))?;
        let jvp = structure_factor_jvp(&self.asu, &self.table, self.optics.energy_ev, self.absorption, params, &support)?;
        Ok(support.iter().enumerate().map(|(i, h)| (*h, jvp.iter().map(|row| row[i]).collect())).collect())
    }

    /// Checks every parameter against the structure and the frames (typed error naming it).
    pub(crate) fn check_params(&self, params: &[Param]) -> Result<(), BlochError> {
        for param in params {
            super::params::structural_direction(&self.asu, param)?;
            if let Param::Thickness { frame } | Param::Orientation { frame, .. } = *param {
                let axis_ok = !matches!(*param, Param::Orientation { axis, .. } if axis > 2);
                if frame >= self.frames.len() || !axis_ok {
                    return Err(InputError::new(format!("parameter {param:?}"), format!("no such frame or axis ({} frames, axes 0-2)", self.frames.len())).into());
                }
            }
        }
        Ok(())
    }

    /// Forward mode: `J[param][row]` = ∂I_row/∂param (2 GEMMs per parameter and tilt).
    pub fn jacobian(&self, params: &[Param]) -> Result<Vec<Vec<f64>>, BlochError> {
        Ok(self.intensities_and_jacobian(params)?.1)
    }

    /// [`GradientModel::intensities`] and [`GradientModel::jacobian`] from one solve of every
    /// tilt (a Gauss–Newton step needs both).
    pub fn intensities_and_jacobian(&self, params: &[Param]) -> Result<(Vec<f64>, Vec<Vec<f64>>), BlochError> {
        self.check_params(params)?;
        let mut intensities = vec![0.0; self.rows().len()];
        let df = self.structure_factor_directions(params)?;
        let im_f000 = self.table.f000().im;
        let mut out = vec![vec![0.0; self.rows().len()]; params.len()];
        self.for_each_tilt(|f, offset, width, plan, tilt, positions| {
            let amplitudes = tilt.propagator.amplitudes(&plan.thicknesses)?;
            for (t, row) in amplitudes.iter().enumerate() {
                for (b, psi) in row.iter().enumerate() {
                    intensities[offset + t * width + positions[b]] += psi.norm_sqr();
                }
            }
            // Every direction of this tilt in one propagator call (G(t) or the Taylor terms shared).
            let TiltDirections { directions, mut which, thickness } = tilt_directions(f, &tilt.geometry, params, &df, im_f000);
            let refs: Vec<_> = directions.iter().map(|e| e.as_ref()).collect();
            let mut dpsi = tilt.propagator.jvp(&plan.thicknesses, &refs)?;
            for &p in &thickness {
                dpsi.push(tilt.propagator.thickness_derivatives(&plan.thicknesses, &amplitudes));
                which.push(p);
            }
            for (&p, dpsi) in which.iter().zip(&dpsi) {
                for (t, (psi_t, dpsi_t)) in amplitudes.iter().zip(dpsi).enumerate() {
                    for (b, (psi, d)) in psi_t.iter().zip(dpsi_t).enumerate() {
                        out[p][offset + t * width + positions[b]] += 2.0 * (psi.conj() * d).re;
                    }
                }
            }
            Ok(())
        })?;
        Ok((intensities, out))
    }

    /// Reverse mode: ∂L/∂param for a loss with ∂L/∂I_row = `cotangent[row]` (one eigen vjp and
    /// an O(N²) scatter per tilt, then one structure-factor pass, whatever the parameter count).
    pub fn loss_gradient(&self, cotangent: &[f64], params: &[Param]) -> Result<Vec<f64>, BlochError> {
        self.check_params(params)?;
        let rows = self.rows().len();
        if cotangent.len() != rows {
            return Err(InputError::new("loss cotangent", format!("{} values for {rows} rows", cotangent.len())).into());
        }
        let mut f_bar = vec![Complex64::new(0.0, 0.0); self.table.hkl_list().len()];
        let im_f000 = self.table.f000().im;
        let mut im_f000_bar = 0.0;
        let mut frame_grads = vec![([0.0; 3], 0.0); self.frames.len()];
        // A real symmetric A meets only real ∂A when F stays real (inversion at the origin).
        let imaginary = !self.asu.centrosymmetric_at_origin();
        self.for_each_tilt(|f, offset, width, plan, tilt, positions| {
            let bars: Vec<Vec<f64>> = (0..plan.thicknesses.len()).map(|t| positions.iter().map(|&b| cotangent[offset + t * width + b]).collect()).collect();
            let (a_bar, d_thickness) = tilt.propagator.vjp(&plan.thicknesses, &bars, imaginary)?;
            let orientation = params.iter().any(|p| matches!(*p, Param::Orientation { frame, .. } if frame == f));
            let reverse = matrix_vjp(&tilt.geometry, &a_bar, im_f000, &mut f_bar, orientation)?;
            im_f000_bar += reverse.im_f000;
            for axis in 0..3 {
                frame_grads[f].0[axis] += reverse.orientation[axis];
            }
            frame_grads[f].1 += d_thickness.iter().sum::<f64>();
            Ok(())
        })?;
        // Off-diagonal differences are never 000 (distinct beams); 000 enters through Im F(000).
        let hkl = self.table.hkl_list();
        let f_bar: Vec<(Hkl, Complex64)> = f_bar.iter().enumerate().filter(|(_, v)| **v != Complex64::new(0.0, 0.0)).map(|(i, v)| (hkl[i], *v)).collect();
        let structural = structure_factor_vjp(&self.asu, &self.table, self.optics.energy_ev, self.absorption, params, &f_bar, im_f000_bar)?;
        Ok(params
            .iter()
            .zip(structural)
            .map(|(param, s)| match *param {
                Param::Thickness { frame } => frame_grads.get(frame).map_or(0.0, |g| g.1),
                Param::Orientation { frame, axis } => frame_grads.get(frame).map_or(0.0, |g| g.0[axis.min(2)]),
                _ => s,
            })
            .collect())
    }
}
