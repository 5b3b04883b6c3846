//! Where a Simulate case runs, on the device the user picked (never substituted):
//! - desktop CPU: `CaseInput::run_within` (f64) on a worker thread;
//! - desktop GPU: `scatterlab_bloch::gpu::simulate_gpu_within` (f32 WGSL, Taylor propagator) on
//!   the app's wgpu device;
//! - browser: the npm package's Worker (`blochSimulateCases`, the CLI's cases-file format, on its
//!   CPU or WebGPU engine), so the UI thread never builds or diagonalises a structure matrix.
//!
//! Every path builds the case with [`build_case`] (zone axis or Euler angles) from the crystal's
//! CIF as edited on the Crystal page, so the three give the CLI's numbers for the same case.

use scatterlab_bloch::beams::{g_vector, lab_reciprocal_basis, Hkl};
use scatterlab_bloch::euler::case_from_euler;
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::simulate::CasesFile;
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::zone::case_from_zone;
use scatterlab_bloch::{Crystal, Limits};

use super::simulate::{SimInputs, SimResult};
use crate::compute_job::{self, Job};
use crate::Device;

/// The cases file of `inputs`' one static case of `crystal` (CIF text `cif`, named `name`).
pub fn build_case(name: &str, cif: &str, crystal: &Crystal, inputs: &SimInputs) -> Result<CasesFile, String> {
    let zone = inputs.zone_case()?;
    match inputs.euler_deg {
        Some(euler) => case_from_euler(name, cif, crystal, &zone, euler),
        None => case_from_zone(name, cif, crystal, &zone),
    }
    .map_err(|e| e.to_string())
}

/// The lab (g_x, g_y) of each beam of `file`'s case: where its spot is drawn.
fn spot_positions(file: &CasesFile, crystal: &Crystal, hkl: &[Hkl]) -> Result<Vec<[f64; 2]>, String> {
    let case = file.cases.first().ok_or("no case built")?;
    let basis = lab_reciprocal_basis(&crystal.cell.direct_matrix(), &case.orientation).map_err(|e| e.to_string())?;
    Ok(hkl.iter().map(|&h| g_vector(h, &basis)).map(|g| [g[0], g[1]]).collect())
}

/// Runs `inputs`' case on the CPU (f64), here and now.
pub fn run_cpu(name: &str, cif: &str, crystal: &Crystal, inputs: &SimInputs) -> Result<SimResult, String> {
    let start = web_time::Instant::now();
    let file = build_case(name, cif, crystal, inputs)?;
    let case = file.cases.first().ok_or("no case built")?;
    let method = Method { solver: inputs.solver, conventions: Conventions::DiffBloch };
    let (hkl, intensities) = case.run_within(crystal, method, &Limits::default()).map_err(|e| e.to_string())?;
    let g_xy = spot_positions(&file, crystal, &hkl)?;
    Ok(SimResult {
        id: case.id.clone(),
        hkl,
        thicknesses: case.thicknesses_a.clone(),
        intensities,
        g_xy,
        solver: inputs.solver,
        device: Device::Cpu,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Runs `inputs`' case on `gpu` (f32 WGSL; the Taylor propagator whatever the solver).
#[cfg(not(target_arch = "wasm32"))]
pub async fn run_gpu(name: &str, cif: &str, crystal: &Crystal, inputs: &SimInputs, gpu: &scatterlab_gpu::GpuContext) -> Result<SimResult, String> {
    use scatterlab_bloch::gpu::{simulate_gpu_within, PropagateGpu};
    let start = web_time::Instant::now();
    let file = build_case(name, cif, crystal, inputs)?;
    let kernel = PropagateGpu::new(gpu).await.map_err(|e| e.to_string())?;
    let out = simulate_gpu_within(&file, Conventions::DiffBloch, &kernel, &Limits::default()).await;
    let case = out.into_iter().next().ok_or("no case ran")?;
    if let Some(e) = case.error {
        return Err(e);
    }
    let (hkl, intensities) = case.hkl.zip(case.intensities).ok_or("the GPU case returned no intensities")?;
    let g_xy = spot_positions(&file, crystal, &hkl)?;
    let thicknesses = file.cases.first().map(|c| c.thicknesses_a.clone()).unwrap_or_default();
    Ok(SimResult { id: case.id, hkl, thicknesses, intensities, g_xy, solver: Solver::Expm, device: Device::Gpu, seconds: start.elapsed().as_secs_f64() })
}

/// Starts `inputs`' case on its device; `gpu` is the app's device (desktop), if any.
#[cfg(not(target_arch = "wasm32"))]
pub fn spawn(name: String, cif: String, crystal: Crystal, inputs: SimInputs, gpu: Option<scatterlab_gpu::GpuContext>, repaint: egui::Context) -> Job<Result<SimResult, String>> {
    compute_job::spawn(repaint, move || async move {
        match (inputs.device, gpu) {
            (Device::Cpu, _) => run_cpu(&name, &cif, &crystal, &inputs),
            (Device::Gpu, Some(gpu)) => run_gpu(&name, &cif, &crystal, &inputs, &gpu).await,
            (Device::Gpu, None) => Err("device GPU: this app has no GPU device (pick CPU f64)".to_owned()),
        }
    })
}

/// Starts `inputs`' case in the npm Worker of its device.
#[cfg(target_arch = "wasm32")]
pub fn spawn(name: String, cif: String, crystal: Crystal, inputs: SimInputs, _gpu: Option<scatterlab_gpu::GpuContext>, repaint: egui::Context) -> Job<Result<SimResult, String>> {
    compute_job::spawn(repaint, move || async move { super::simulate_worker::run(&name, &cif, &crystal, &inputs).await })
}

/// Reads one case of the worker's `blochSimulateCases` answer (already plain arrays).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn from_worker(file: &CasesFile, crystal: &Crystal, inputs: &SimInputs, hkl: Vec<Hkl>, flat: &[f64], device: Device, seconds: f64) -> Result<SimResult, String> {
    let case = file.cases.first().ok_or("no case built")?;
    let n = hkl.len();
    let thicknesses = case.thicknesses_a.clone();
    if n == 0 || flat.len() != n * thicknesses.len() {
        return Err(format!("the worker returned {} intensities for {n} beams × {} thicknesses", flat.len(), thicknesses.len()));
    }
    let intensities = flat.chunks(n).map(<[f64]>::to_vec).collect();
    let g_xy = spot_positions(file, crystal, &hkl)?;
    let solver = if device == Device::Gpu { Solver::Expm } else { inputs.solver };
    Ok(SimResult { id: case.id.clone(), hkl, thicknesses, intensities, g_xy, solver, device, seconds })
}
