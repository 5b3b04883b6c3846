//! Where a Bloch run propagates: the CPU in f64 (`"eigen"` or `"expm"`) or the GPU in f32 (the
//! WGSL Taylor kernel of `scatterlab_bloch::gpu`, `"taylor"`), chosen by `options.device` (default
//! `"cpu"`, whatever the handle's device: the f64 reference is the safe default for science) and
//! never substituted. A solver the device cannot run is an error naming both, as in `scatterlab
//! bloch simulate --device … --solver …`.
//!
//! The GPU kernel is compiled once per worker and kept ([`acquire`]): on a `"gpu"` handle it
//! shares the handle's WebGPU device; on a `"cpu"` handle the first GPU run requests an adapter,
//! and its absence rejects with an error naming device "gpu".

use std::cell::RefCell;
use std::rc::Rc;

use scatterlab_bloch::beams::Hkl;
use scatterlab_bloch::gpu::{run_gpu_within, PropagateGpu};
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::simulate::CaseInput;
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::{BlochError, Crystal, Limits, StructureFactors};
use scatterlab_gpu::GpuContext;
use serde_json::{Map, Value};

use crate::options::choice;

/// The propagator of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// f64 on the worker's CPU.
    Cpu(Solver),
    /// f32 Taylor steps on WebGPU (natively: wgpu's adapter).
    Gpu,
}

impl Engine {
    /// `"cpu"` or `"gpu"`: the `device` field of a result.
    pub fn device(self) -> &'static str {
        match self {
            Engine::Cpu(_) => "cpu",
            Engine::Gpu => "gpu",
        }
    }

    /// `"eigen"`, `"expm"` or `"taylor"`: the `solver` field of a result.
    pub fn solver(self) -> &'static str {
        match self {
            Engine::Cpu(Solver::Eigen) => "eigen",
            Engine::Cpu(_) => "expm",
            Engine::Gpu => "taylor",
        }
    }
}

/// Reads `options.device` (`"cpu"` default, `"gpu"`) and `options.solver` (`"expm"` default on the
/// CPU, `"eigen"`; `"taylor"`, the GPU's only one) of call `op`; a pairing the device cannot run
/// is an error naming both.
pub fn parse_engine(m: &Map<String, Value>, op: &str) -> Result<Engine, String> {
    let device = choice(m, "device", op, &["cpu", "gpu"])?.unwrap_or("cpu");
    let solver = choice(m, "solver", op, &["eigen", "expm", "taylor"])?;
    match (device, solver) {
        ("gpu", None | Some("taylor")) => Ok(Engine::Gpu),
        ("gpu", Some(s)) => Err(format!(
            "{op}: options.solver \"{s}\" runs on the CPU only (f64); device \"gpu\" propagates by f32 Taylor steps: use options.device \"cpu\", or options.solver \"taylor\" (the GPU's default)"
        )),
        (_, Some("taylor")) => Err(format!("{op}: options.solver \"taylor\" runs on the GPU only: add options.device \"gpu\", or pick \"eigen\" or \"expm\" for the CPU")),
        (_, Some("eigen")) => Ok(Engine::Cpu(Solver::Eigen)),
        _ => Ok(Engine::Cpu(Solver::Expm)),
    }
}

/// The compiled GPU kernel and the device it runs on.
#[derive(Debug)]
pub struct GpuKernel {
    /// The propagation kernel.
    pub propagate: PropagateGpu,
    /// Adapter and backend in words (the result's `backend`).
    pub describe: String,
}

impl GpuKernel {
    /// Compiles the kernel on `ctx` (an error names device "gpu" and `op`).
    pub async fn new(ctx: &GpuContext, op: &str) -> Result<Self, String> {
        let propagate = PropagateGpu::new(ctx).await.map_err(|e| format!("{op}: device \"gpu\": {e}"))?;
        Ok(Self { propagate, describe: ctx.describe() })
    }
}

thread_local! {
    /// The worker's kernel, compiled on first use (one WebGPU device per worker, single-threaded wasm).
    static KERNEL: RefCell<Option<Rc<GpuKernel>>> = const { RefCell::new(None) };
}

/// The worker's GPU kernel: compiled on `handle_ctx` (a `"gpu"` handle's device) or on a newly
/// requested adapter the first time, then reused. No adapter (or no WebGPU at all) is an error
/// naming device "gpu"; nothing falls back to the CPU.
pub async fn acquire(handle_ctx: Option<&GpuContext>, op: &str) -> Result<Rc<GpuKernel>, String> {
    if let Some(k) = KERNEL.with(|k| k.borrow().clone()) {
        return Ok(k);
    }
    let kernel = match handle_ctx {
        Some(ctx) => GpuKernel::new(ctx, op).await?,
        None => {
            crate::check_webgpu_present().map_err(|e| format!("{op}: {e}"))?;
            let ctx = GpuContext::new(&scatterlab_gpu::GpuOptions::default()).await.map_err(|e| format!("{op}: device \"gpu\": {e}"))?;
            GpuKernel::new(&ctx, op).await?
        }
    };
    let kernel = Rc::new(kernel);
    KERNEL.with(|k| *k.borrow_mut() = Some(kernel.clone()));
    Ok(kernel)
}

/// The structure factors of `case` on `crystal` (its grid radius, energy and absorption).
pub fn table(case: &CaseInput, crystal: &Crystal, limits: &Limits) -> Result<StructureFactors, BlochError> {
    StructureFactors::compute_within(crystal, case.grid_radius(), case.energy_ev, case.absorption, limits)
}

/// Runs `case` on `crystal` with the structure factors `table` on `engine` (diffBloch's
/// conventions, the CLI's default): beams sorted by (h, k, l) and `I[thickness][beam]`, the numbers
/// of `CaseInput::run_within` on the CPU and of `run_gpu_within` on the GPU. `gpu` is required
/// for [`Engine::Gpu`].
pub async fn run_case(
    case: &CaseInput,
    crystal: &Crystal,
    table: &StructureFactors,
    engine: Engine,
    gpu: Option<&GpuKernel>,
    limits: &Limits,
) -> Result<(Vec<Hkl>, Vec<Vec<f64>>), BlochError> {
    let simulation = case.simulation(crystal)?;
    let pattern = match (engine, gpu) {
        (Engine::Cpu(solver), _) => {
            if case.absorption && solver == Solver::Eigen {
                return Err(BlochError::Numerical {
                    object: format!("case {:?}", case.id),
                    message: "absorptive case: the structure matrix is not Hermitian, use solver \"expm\"".to_owned(),
                });
            }
            simulation.run_within(table, Method { solver, conventions: Conventions::DiffBloch }, limits)?
        }
        (Engine::Gpu, Some(kernel)) => run_gpu_within(&simulation, table, Conventions::DiffBloch, &kernel.propagate, limits).await?,
        (Engine::Gpu, None) => return Err(BlochError::Numerical { object: "device \"gpu\"".to_owned(), message: "no GPU kernel was acquired".to_owned() }),
    };
    Ok((pattern.hkl, pattern.intensities))
}
