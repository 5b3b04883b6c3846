//! diffBloch 0.2.0rc1's geometry recipe for a PETS experiment: beam energy from the PETS
//! wavelength, one orientation per virtual frame, the rocking-curve tilts, the coupled beam sets
//! (union or per-tilt coupling) and the scored reflections (the Klar rsg/dsg window), so that one
//! structure gives the calculated intensities diffBloch gives.
//!
//! The recipe, step by step, with diffBloch's source for each:
//! - Energy: E from λ by the exact relativistic inverse, snapped to 100/200/300 kV when within
//!   0.5 % (`core/dynamical/primitives.py::wavelength2energy`, `snap_to_standard_energy`).
//! - Cell: the PETS cell is authoritative for all geometry, the structure factors and the ADP
//!   frame; the CIF cell must agree within 5 % (`preprocess/experiment.py::_resolve_authoritative_cell`).
//! - U0 = prefactor·|F(000)| of the *start* structure, frozen for every frame (`_mean_inner_potential`).
//! - Orientation of frame i: O = R_z(−axis) · R_z(ω) R_x(α) R_y(β) · U with U = UB · B⁻¹, B the
//!   Busing–Levy matrix of the PETS cell, never re-orthonormalised (`preprocess/orientation.py`).
//! - Tilts: continuous rotation R_x(θ_j), θ = linspace(−semi, +semi, n) (identity when n = 1);
//!   precession R_z(φ) R_x(semi) R_z(−φ), φ = linspace(0, 360, n, endpoint=False); O_j = T_j · O.
//! - Coupling (`preprocess/coupling.py`): pool = {hkl of the F grid (|g| ≤ 2 g_max + 0.5 in the
//!   cell metric) with |g| < g_max in the orientation metric}; tilt j excites {|Sg| < sg_max}.
//!   Union coupling splits the tilts into chunks (adaptive recursive bisection by default, else
//!   fixed even chunks) and solves each chunk on the union of its boundary tilts' excited sets;
//!   per-tilt coupling solves every tilt on its own set.
//! - Scored set (`preprocess/steps/beams.py::klar_beam_mask`): seed beams (|g| ≤ g_max in the cell
//!   metric) at the untilted orientation with sg_lever = |(g_y, g_z)|·semi (continuous rotation) or
//!   |(g_x, g_y)|·semi (precession) and |Sg|/sg_lever < rsg and sg_lever − |Sg| > dsg, plus 000;
//!   a frame scores its observed reflections (file order) that are both in its solved union and
//!   in that set (`core/products.py::build_alignment_plan`).

use scatterlab_core::InputError;

use super::experiment::{ExperimentConfig, SolverMethod};
use super::pets::{CollectionGeometry, PetsData};
use super::RefineError;
use crate::beams::{g_vector, lab_reciprocal_basis, mat3_mul, norm, rotation_x, tilt_angles_deg, Hkl, Mat3};
use crate::crystal::Cell;
use crate::frame::{Frame, Segment};
use crate::geometry::Optics;
use crate::gradient::FramePlan;
use crate::pattern::Method;
use crate::solve::Solver;

mod coupling;

use coupling::{coupling_segments, klar_set};

/// The voltages diffBloch snaps a PETS-derived energy onto (eV).
pub const STANDARD_ENERGIES_EV: [f64; 3] = [100_000.0, 200_000.0, 300_000.0];
/// Relative distance within which an energy is snapped (PETS writes λ to 4–5 digits).
pub const ENERGY_SNAP_TOLERANCE: f64 = 0.005;
/// Extra radius of diffBloch's structure-factor grid beyond 2·g_max (Å⁻¹).
pub const GRID_MARGIN_INV_A: f64 = 0.5;

/// Beam energy (eV) of a relativistic electron of wavelength `wavelength_a` (Å): the exact inverse
/// of [`crate::geometry::wavelength_a`].
pub fn wavelength_to_energy_ev(wavelength_a: f64) -> f64 {
    scatterlab_core::units::electron_energy_ev(wavelength_a)
}

/// `energy_ev` snapped onto the nearest standard voltage when within [`ENERGY_SNAP_TOLERANCE`].
pub fn snap_energy_ev(energy_ev: f64) -> f64 {
    let nearest = STANDARD_ENERGIES_EV.iter().copied().fold(f64::NAN, |best, e| if best.is_nan() || (e - energy_ev).abs() < (best - energy_ev).abs() { e } else { best });
    if (nearest - energy_ev).abs() <= ENERGY_SNAP_TOLERANCE * nearest {
        nearest
    } else {
        energy_ev
    }
}

fn rotation_y(theta: f64) -> Mat3 {
    let (s, c) = theta.sin_cos();
    [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
}

fn rotation_z(theta: f64) -> Mat3 {
    let (s, c) = theta.sin_cos();
    [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
}

/// The inverse of a 3×3 matrix by cofactors, or `None` when (nearly) singular.
fn inverse(m: &Mat3) -> Option<Mat3> {
    let c = |i: usize, j: usize| {
        let (r0, r1, c0, c1) = ((i + 1) % 3, (i + 2) % 3, (j + 1) % 3, (j + 2) % 3);
        m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]
    };
    let det = m[0][0] * c(0, 0) + m[0][1] * c(0, 1) + m[0][2] * c(0, 2);
    let scale = m.iter().flatten().fold(0.0_f64, |a, v| a.max(v.abs()));
    if !det.is_finite() || det.abs() <= 1e-12 * scale * scale * scale {
        return None;
    }
    // inverse = adjugate / det, adjugate = cofactorᵀ.
    Some(std::array::from_fn(|i| std::array::from_fn(|j| c(j, i) / det)))
}

/// Busing–Levy B (rows as diffBloch writes them, a* along x) of `(a, b, c, α, β, γ)`.
pub fn busing_levy(cell: &[f64; 6]) -> Mat3 {
    let [a, b, c] = [cell[0], cell[1], cell[2]];
    let [alpha, beta, gamma] = [cell[3], cell[4], cell[5]].map(f64::to_radians);
    let (ca, cb, cg, sg) = (alpha.cos(), beta.cos(), gamma.cos(), gamma.sin());
    let volume = a * b * c * (1.0 - ca * ca - cb * cb - cg * cg + 2.0 * ca * cb * cg).sqrt();
    [
        [1.0 / a, 0.0, 0.0],
        [-cg / (a * sg), 1.0 / (b * sg), 0.0],
        [b * c / volume * (cg * (ca - cb * cg) / sg - cb * sg), a * c / (volume * sg) * (ca - cb * cg), a * b * sg / volume],
    ]
}

/// The rocking-curve tilt matrices T_j (O_j = T_j · O).
pub fn rocking_tilts(semiangle_deg: f64, sampling: usize, geometry: CollectionGeometry) -> Vec<Mat3> {
    match geometry {
        CollectionGeometry::ContinuousRotation => tilt_angles_deg(semiangle_deg, sampling).iter().map(|a| rotation_x(a.to_radians())).collect(),
        CollectionGeometry::Precession => {
            let polar = rotation_x(semiangle_deg.to_radians());
            (0..sampling)
                .map(|j| {
                    let phi = (360.0 * j as f64 / sampling as f64).to_radians();
                    mat3_mul(&mat3_mul(&rotation_z(phi), &polar), &rotation_z(-phi))
                })
                .collect()
        }
    }
}

/// All hkl with |g| ≤ `radius` in the metric of `reciprocal` (rows a*, b*, c*), over the box
/// |h_i| ≤ ceil(box_radius/|a*_i|), in (h, k, l) order.
fn hkl_sphere(reciprocal: &Mat3, radius: f64, box_radius: f64) -> Result<Vec<Hkl>, RefineError> {
    let lengths = reciprocal.map(norm);
    let reach: [i32; 3] = std::array::from_fn(|i| (box_radius / lengths[i]).ceil() as i32);
    let points: u64 = reach.iter().map(|&m| 2 * u64::try_from(m).unwrap_or(0) + 1).product();
    if points > 1 << 26 {
        return Err(RefineError::Inconsistent { item: "structure-factor grid".to_owned(), message: format!("hkl box {reach:?} is too large (g_max too large for this cell)") });
    }
    let mut out = Vec::new();
    for h in -reach[0]..=reach[0] {
        for k in -reach[1]..=reach[1] {
            for l in -reach[2]..=reach[2] {
                if norm(g_vector([h, k, l], reciprocal)) <= radius {
                    out.push([h, k, l]);
                }
            }
        }
    }
    Ok(out)
}

/// One observed reflection that a frame scores.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// Miller indices.
    pub hkl: Hkl,
    /// Observed intensity.
    pub intensity: f64,
    /// Its σ.
    pub sigma: f64,
    /// Line of the `.cif_pets` row.
    pub line: usize,
}

/// One virtual frame of the plan: its orientation, tilts, coupling segments and scored rows.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedFrame {
    /// PETS `_diffrn_zone_axis_id`.
    pub id: i64,
    /// Zero-based position of the frame in the PETS zone-axis loop.
    pub rotation_index: usize,
    /// Orientation O (lab = O · crystal Cartesian), before the tilts.
    pub orientation: Mat3,
    /// Tilted orientations T_j · O.
    pub orientations: Vec<Mat3>,
    /// Coupling segments (beam sets sorted by (h, k, l); tilt covers).
    pub segments: Vec<Segment>,
    /// The observed reflections scored in this frame, in file order.
    pub scored: Vec<Scored>,
}

/// The geometry of a whole experiment, frozen at the start structure.
#[derive(Debug, Clone, PartialEq)]
pub struct GeometryPlan {
    /// The authoritative (PETS) cell.
    pub cell: Cell,
    /// Beam energy (eV), snapped.
    pub energy_ev: f64,
    /// Optics with U0 frozen from the start structure.
    pub optics: Optics,
    /// Thicknesses (Å) of every frame.
    pub thicknesses_a: Vec<f64>,
    /// Absorptive model.
    pub absorption: bool,
    /// Solver method.
    pub method: Method,
    /// The frames (PETS order, ignored rotations left out).
    pub frames: Vec<PlannedFrame>,
    /// Radius of diffBloch's structure-factor grid (Å⁻¹), 2·g_max + 0.5.
    pub grid_g_max_inv_a: f64,
    /// The rocking-curve tilt rotations T_j shared by every frame (O_j = T_j · O).
    pub tilts: Vec<Mat3>,
}

impl GeometryPlan {
    /// The crate's rocking-curve [`Frame`] of planned frame `index`, ready to be solved on a
    /// structure-factor table with [`GeometryPlan::optics`] and [`GeometryPlan::method`].
    pub fn frame(&self, index: usize) -> Option<Frame> {
        let f = self.frames.get(index)?;
        Some(Frame {
            name: format!("frame {}", f.id),
            direct: self.cell.direct_matrix(),
            orientations: f.orientations.clone(),
            segments: f.segments.clone(),
            thicknesses_a: self.thicknesses_a.clone(),
            absorption: self.absorption,
        })
    }

    /// Planned frame `index` as a gradient-model [`FramePlan`]: its orientation, the shared tilts,
    /// each tilt's coupled beam set (from the segment that covers it) and the first thickness
    /// (the one the metrics score). A tilt covered by no segment or by two is an error.
    pub fn frame_plan(&self, index: usize) -> Result<FramePlan, RefineError> {
        let f =
            self.frames.get(index).ok_or_else(|| RefineError::Inconsistent { item: format!("frame {index}"), message: format!("out of range ({} frames)", self.frames.len()) })?;
        let mut beams: Vec<Option<Vec<Hkl>>> = vec![None; self.tilts.len()];
        for segment in &f.segments {
            for &t in &segment.tilts {
                let slot = beams
                    .get_mut(t)
                    .ok_or_else(|| RefineError::Inconsistent { item: format!("frame {}: tilt {t}", f.id), message: format!("out of range ({} tilts)", self.tilts.len()) })?;
                if slot.replace(segment.hkl.clone()).is_some() {
                    return Err(RefineError::Inconsistent { item: format!("frame {}: tilt {t}", f.id), message: "covered by two coupling segments".to_owned() });
                }
            }
        }
        let beams = beams
            .into_iter()
            .enumerate()
            .map(|(t, b)| b.ok_or_else(|| RefineError::Inconsistent { item: format!("frame {}: tilt {t}", f.id), message: "covered by no coupling segment".to_owned() }))
            .collect::<Result<Vec<_>, _>>()?;
        let thickness = *self.thicknesses_a.first().ok_or_else(|| InputError::new("sample.thicknesses", "must contain at least one value"))?;
        Ok(FramePlan { orientation: f.orientation, tilts: self.tilts.clone(), beams, thicknesses: vec![thickness] })
    }

    /// Builds the plan of `pets` under `config` with U0 = prefactor·|`f000`| (F(000) of the start
    /// structure in the PETS cell, Å⁻²).
    pub fn build(config: &ExperimentConfig, pets: &PetsData, f000: num_complex::Complex64) -> Result<Self, RefineError> {
        let bw = &config.blochwave;
        let cell = Cell { lengths: [pets.cell[0], pets.cell[1], pets.cell[2]], angles_deg: [pets.cell[3], pets.cell[4], pets.cell[5]] };
        cell.validate().map_err(|m| RefineError::Pets { file: pets.file.clone(), line: 0, message: format!("cell: {m}") })?;
        let energy_ev = snap_energy_ev(wavelength_to_energy_ev(pets.wavelength_a));
        let optics = Optics::new(energy_ev, f000)?;
        let k = optics.k_n_inv_a;
        let direct = cell.direct_matrix();
        let reciprocal = cell.reciprocal_matrix();
        let grid_g_max_inv_a = 2.0 * bw.g_max + GRID_MARGIN_INV_A;
        // The coupling pool comes from the F grid; only |g| < g_max (orientation metric) survive,
        // so a box of radius 2·g_max already holds every survivor for any sane UB residual.
        let grid = hkl_sphere(&reciprocal, grid_g_max_inv_a, grid_g_max_inv_a.min(2.0 * bw.g_max))?;
        let seed: Vec<Hkl> = grid.iter().copied().filter(|&h| norm(g_vector(h, &reciprocal)) <= bw.g_max).collect();

        let axis = pets.require_rotation_axis_position()?;
        let inverse_b = inverse(&busing_levy(&pets.cell)).ok_or_else(|| RefineError::Pets {
            file: pets.file.clone(),
            line: 0,
            message: "cell: the Busing-Levy matrix is singular".to_owned(),
        })?;
        let u = mat3_mul(&pets.ub, &inverse_b);
        let correction = rotation_z((-axis).to_radians());
        let semiangle = pets.semiangle_deg();
        let tilts = rocking_tilts(semiangle, bw.rocking_curve_sampling, pets.geometry);

        if let Some(&bad) = bw.ignore_orientations.iter().find(|&&i| i >= pets.frames.len()) {
            return Err(RefineError::Yaml {
                file: "experiment.yaml".to_owned(),
                key: "blochwave.ignore_orientations".to_owned(),
                message: format!("index {bad} is outside the PETS rotations 0..{}", pets.frames.len().saturating_sub(1)),
            });
        }
        let mut frames = Vec::with_capacity(pets.frames.len());
        for (rotation_index, zone) in pets.frames.iter().enumerate() {
            if bw.ignore_orientations.contains(&rotation_index) {
                continue;
            }
            let goniometer = mat3_mul(&mat3_mul(&rotation_z(zone.omega_deg.to_radians()), &rotation_x(zone.alpha_deg.to_radians())), &rotation_y(zone.beta_deg.to_radians()));
            let orientation = mat3_mul(&correction, &mat3_mul(&goniometer, &u));
            let basis = lab_reciprocal_basis(&direct, &orientation)?;
            let segments = coupling_segments(config, &grid, &basis, &tilts, k);
            let scored_set = klar_set(config, &seed, &basis, k, semiangle, pets.geometry);
            let mut union: Vec<Hkl> = segments.iter().flat_map(|s| s.hkl.iter().copied()).collect();
            union.sort_unstable();
            union.dedup();
            let scored = pets
                .reflections
                .iter()
                .filter(|r| r.frame_id == zone.id && union.binary_search(&r.hkl).is_ok() && scored_set.binary_search(&r.hkl).is_ok())
                .map(|r| Scored { hkl: r.hkl, intensity: r.intensity, sigma: r.sigma, line: r.line })
                .collect();
            let orientations = tilts.iter().map(|t| mat3_mul(t, &orientation)).collect();
            frames.push(PlannedFrame { id: zone.id, rotation_index, orientation, orientations, segments, scored });
        }
        let solver = match bw.solver {
            SolverMethod::MatrixExp => Solver::Expm,
            SolverMethod::BlochEigen => Solver::Eigen,
        };
        if config.sample.thicknesses.is_empty() {
            return Err(InputError::new("sample.thicknesses", "must contain at least one value").into());
        }
        Ok(Self {
            cell,
            energy_ev,
            optics,
            thicknesses_a: config.sample.thicknesses.clone(),
            absorption: bw.absorption,
            method: Method { solver, ..Method::default() },
            frames,
            grid_g_max_inv_a,
            tilts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_round_trips_and_snaps() {
        let lambda = crate::geometry::wavelength_a(200e3).unwrap();
        assert!((wavelength_to_energy_ev(lambda) - 200e3).abs() < 1e-6);
        assert_eq!(snap_energy_ev(wavelength_to_energy_ev(0.02508)), 200e3);
        assert_eq!(snap_energy_ev(150e3), 150e3);
    }

    #[test]
    fn busing_levy_is_the_inverse_cell() {
        let cell = [4.9, 4.9, 5.4, 90.0, 90.0, 120.0];
        let b = busing_levy(&cell);
        let direct = Cell { lengths: [4.9, 4.9, 5.4], angles_deg: [90.0, 90.0, 120.0] }.direct_matrix();
        let product = mat3_mul(&direct, &b);
        for (i, row) in product.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                assert!((v - f64::from(u8::from(i == j))).abs() < 1e-12, "{product:?}");
            }
        }
    }
}
