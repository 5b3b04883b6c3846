//! Simulations on the GPU: the structure matrices are built on the CPU in f64 (beam selection and
//! F(g) lookups are cheap and branchy), every orientation of a simulation (one, or each tilt of a
//! rocking curve) is propagated in one batch by [`PropagateGpu`] (f32 Taylor steps), and the
//! intensities are read out and summed exactly as [`Simulation::run`] does on the CPU.

use std::collections::BTreeMap;

use num_complex::Complex64;

use super::{PropagateGpu, PropagationItem, MAX_GPU_BEAMS};
use crate::beams::{tilted_orientations, Cutoff, Hkl};
use crate::limits::Limits;
use crate::matrix::{Conventions, StructureFactorTable, StructureMatrix};
use crate::pattern::{Pattern, Simulation};
use crate::propagate::{norm1, TaylorPlan};
use crate::rocking::Coupling;
use crate::solve::{check_propagated, check_thicknesses};
use crate::BlochError;

/// Taylor plan of the f32 kernel: ‖h·A‖₁ ≤ 1 per substep, 12 terms (truncation 1/13! ≈ 2e-10,
/// below f32 rounding).
const THETA: f64 = 1.0;
const TERMS: u32 = 12;
/// Flux excess tolerated from f32 rounding over a thickness series before a result counts as
/// drifted (seen ≤ 3e-6 on the fixture; the GPU gate on intensities is 1e-4).
pub const GPU_FLUX_TOLERANCE: f64 = 1e-3;

/// One orientation's beams and matrix, reordered so that the incident 000 beam comes first
/// (the kernel starts from e₀).
struct Problem {
    beams: Vec<Hkl>,
    /// Row-major, in `order`.
    matrix: Vec<Complex64>,
    /// `order[p]` = index in `beams` of the row at position p.
    order: Vec<usize>,
    /// Read-out factor per beam (abTEM's physical amplitudes: (M_i / M_000)²; else 1).
    readout: Vec<f64>,
    /// π / K: the propagation phase per Å.
    scale: f64,
    /// Whether A is Hermitian (then Σ|ψ|² is conserved and checked).
    hermitian: bool,
    /// Names the orientation in errors (the simulation, and the tilt of a rocking curve).
    object: String,
}

fn problem(beams: &[Hkl], m: &StructureMatrix, object: String) -> Problem {
    let n = beams.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.swap(0, m.index_000);
    let mut matrix = Vec::with_capacity(n * n);
    for &i in &order {
        for &j in &order {
            matrix.push(m.a[(i, j)]);
        }
    }
    let m000 = m.mii[m.index_000];
    let readout = match m.conventions {
        Conventions::DiffBloch => vec![1.0; n],
        Conventions::Abtem => m.mii.iter().map(|&mi| (mi / m000).powi(2)).collect(),
    };
    Problem { beams: beams.to_vec(), matrix, order, readout, scale: std::f64::consts::PI / m.k, hermitian: m.hermitian, object }
}

/// Runs `simulation` on structure factors `table` in `conventions`, propagating on `gpu`, within
/// the default [`Limits`].
pub async fn run_gpu(simulation: &Simulation, table: &dyn StructureFactorTable, conventions: Conventions, gpu: &PropagateGpu) -> Result<Pattern, BlochError> {
    run_gpu_within(simulation, table, conventions, gpu, &Limits::default()).await
}

/// Checks a beam set against `limits` and the kernel's own [`MAX_GPU_BEAMS`] before its matrix is built.
fn check_gpu_beams(simulation: &Simulation, beams: usize, object: &str, limits: &Limits) -> Result<(), BlochError> {
    limits.check_beams(beams, &simulation.beam_source(object))?;
    if beams > MAX_GPU_BEAMS {
        return Err(scatterlab_core::InputError::new(
            object,
            format!("{beams} beams: the GPU kernel takes at most {MAX_GPU_BEAMS} (use --device cpu, or lower g_solve or sg_max)"),
        )
        .into());
    }
    Ok(())
}

/// [`run_gpu`] with every input-derived size held to `limits` (and the kernel's
/// [`MAX_GPU_BEAMS`]) before it is allocated; a non-finite result, or a Hermitian case whose
/// flux grew beyond [`GPU_FLUX_TOLERANCE`], is an error naming the orientation and thickness.
pub async fn run_gpu_within(
    simulation: &Simulation,
    table: &dyn StructureFactorTable,
    conventions: Conventions,
    gpu: &PropagateGpu,
    limits: &Limits,
) -> Result<Pattern, BlochError> {
    check_thicknesses(&simulation.thicknesses_a)?;
    let name = format!("simulation {:?}", simulation.name);
    limits.check_series(&name, simulation.thicknesses_a.len(), simulation.rocking.as_ref().map_or(1, |r| r.tilt_angles_deg.len()))?;
    let optics = simulation.optics(table)?;
    let mut problems = Vec::new();
    let union = match &simulation.rocking {
        None => {
            let hkl = simulation.select_beams(table, &optics, &simulation.orientation, Cutoff::Inclusive)?;
            check_gpu_beams(simulation, hkl.len(), &name, limits)?;
            let m = simulation.matrix(table, &optics, &simulation.orientation, &hkl, conventions)?;
            problems.push(problem(&hkl, &m, name.clone()));
            hkl
        }
        Some(rocking) => {
            let orientations = tilted_orientations(&simulation.orientation, &rocking.tilt_angles_deg);
            let objects: Vec<String> = rocking.tilt_angles_deg.iter().enumerate().map(|(i, a)| format!("{name}, tilt {i} ({a}°)")).collect();
            let mut per_tilt: Vec<Vec<Hkl>> = Vec::with_capacity(orientations.len());
            for (o, object) in orientations.iter().zip(&objects) {
                let beams = simulation.select_beams(table, &optics, o, Cutoff::Strict)?;
                check_gpu_beams(simulation, beams.len(), object, limits)?;
                per_tilt.push(beams);
            }
            let mut union: Vec<Hkl> = per_tilt.iter().flatten().copied().collect();
            union.sort_unstable();
            union.dedup();
            if rocking.coupling == Coupling::Union {
                check_gpu_beams(simulation, union.len(), &format!("{name}, union of the tilts' beams"), limits)?;
            }
            for ((o, own), object) in orientations.iter().zip(&per_tilt).zip(objects) {
                let beams = match rocking.coupling {
                    Coupling::PerTilt => own,
                    Coupling::Union => &union,
                };
                let m = simulation.matrix(table, &optics, o, beams, conventions)?;
                problems.push(problem(beams, &m, object));
            }
            union
        }
    };
    limits.check_intensities(&name, simulation.thicknesses_a.len(), union.len())?;
    let norm = problems.iter().map(|p| norm1(p.beams.len(), &p.matrix)).fold(0.0, f64::max);
    let scale = problems.first().map_or(0.0, |p| p.scale);
    let plan = TaylorPlan::new(norm, scale, &simulation.thicknesses_a, THETA, TERMS)?;
    let items: Vec<PropagationItem> = problems.iter().map(|p| PropagationItem { n: p.beams.len(), matrix: &p.matrix }).collect();
    let results = gpu.intensities(&items, &plan).await?;
    let mut sums: BTreeMap<Hkl, Vec<f64>> = union.iter().map(|&h| (h, vec![0.0; simulation.thicknesses_a.len()])).collect();
    for (p, per_thickness) in problems.iter().zip(&results) {
        for (row, &thickness) in per_thickness.iter().zip(&simulation.thicknesses_a) {
            // The kernel starts from e₀ and returns |ψ|² in the matrix's basis: Σ is the flux.
            let flux = p.hermitian.then(|| row.iter().sum::<f64>());
            check_propagated(row, flux, 1.0, GPU_FLUX_TOLERANCE, &p.object, thickness)?;
        }
        for (t, row) in per_thickness.iter().enumerate() {
            for (&beam_index, &value) in p.order.iter().zip(row) {
                if let Some(sum) = sums.get_mut(&p.beams[beam_index]) {
                    sum[t] += value * p.readout[beam_index];
                }
            }
        }
    }
    let intensities = (0..simulation.thicknesses_a.len()).map(|t| union.iter().map(|h| sums.get(h).map_or(0.0, |s| s[t])).collect()).collect();
    Ok(Pattern { hkl: union, intensities })
}

/// Every case of a cases file on the GPU (as [`crate::simulate::simulate`] on the CPU) within the
/// default [`Limits`]: a failing case gets its error and the others still run.
pub async fn simulate_gpu(file: &crate::simulate::CasesFile, conventions: Conventions, gpu: &PropagateGpu) -> Vec<crate::simulate::CaseOutput> {
    simulate_gpu_within(file, conventions, gpu, &Limits::default()).await
}

/// [`simulate_gpu`] with every case held to `limits`.
pub async fn simulate_gpu_within(file: &crate::simulate::CasesFile, conventions: Conventions, gpu: &PropagateGpu, limits: &Limits) -> Vec<crate::simulate::CaseOutput> {
    use crate::simulate::CaseOutput;
    let mut out = Vec::with_capacity(file.cases.len());
    for case in &file.cases {
        let result = async {
            let entry = file
                .crystals
                .get(&case.crystal)
                .ok_or_else(|| BlochError::from(scatterlab_core::InputError::new(format!("case {:?}: crystal {:?}", case.id, case.crystal), "not in the file's crystals")))?;
            let crystal = crate::parse_cif(&case.crystal, &entry.cif)?;
            let table = crate::StructureFactors::compute_within(&crystal, case.grid_radius(), case.energy_ev, case.absorption, limits)?;
            run_gpu_within(&case.simulation(&crystal)?, &table, conventions, gpu, limits).await
        }
        .await;
        out.push(match result {
            Ok(p) => CaseOutput { id: case.id.clone(), hkl: Some(p.hkl), intensities: Some(p.intensities), error: None },
            Err(e) => CaseOutput { id: case.id.clone(), hkl: None, intensities: None, error: Some(e.to_string()) },
        });
    }
    out
}
