//! `scatterlab bloch simulate <cases.json> [--device cpu|gpu] [--solver eigen|expm|taylor]
//! [--conventions diffbloch|abtem] [--max-beams N] [--max-grid-points N] [--max-work G] --out <results.json>`:
//! every case of a Bloch cases file (the fixture's format; reference results in it are never
//! read) as `{"solver", "solver_from", "device", "cases": [{"id", "hkl", "I", "thicknesses_A",
//! "g_invA", "Sg_invA", …}]}`; or, with `--cif f.cif --kv … --zone … --thickness …`, one case
//! built from flags ([`crate::bloch_cif`]) and run the same way.
//!
//! The solver follows the device unless the user names one: expm on the CPU (f64), the f32
//! Taylor propagator on the GPU (the only one its kernel has). A named solver the device cannot
//! run is an error, never substituted; the file says which solver ran and whether it was asked
//! for (`solver_from`). A case that fails gets an `"error"` entry and the others still run; the
//! command then exits non-zero after writing the file, naming the failed cases.

use std::path::Path;

use clap::ValueEnum;
use scatterlab_bloch::gpu::{simulate_gpu_within, PropagateGpu};
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::simulate::{parse_cases, simulate_with_progress, CasesFile};
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::Limits;
use scatterlab_core::DeviceKind;

/// `--solver`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SolverArg {
    /// CPU, f64: Hermitian eigendecomposition, one per orientation for the whole thickness series (non-absorptive cases only).
    Eigen,
    /// CPU, f64: Padé-13 scaling-and-squaring matrix exponential per thickness (any case; the CPU default).
    Expm,
    /// GPU, f32: Taylor-series propagation in the WGSL kernel (any case; the GPU default and its only solver).
    Taylor,
}

/// `--conventions`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ConventionsArg {
    /// diffBloch 0.2: U0 in K, M once on the diagonal.
    Diffbloch,
    /// abTEM 1.0: K = 1/λ, M² on the diagonal, physical amplitudes M·ψ′.
    Abtem,
}

/// The command's arguments.
pub struct Args<'a> {
    /// The cases file (absent with `--cif`).
    pub cases: Option<&'a Path>,
    /// `--cif` and the flags of its one case.
    pub cif: &'a crate::bloch_cif::CifFlags,
    /// `--solver`, when given.
    pub solver: Option<SolverArg>,
    /// `--conventions`.
    pub conventions: ConventionsArg,
    /// `--device`.
    pub device: DeviceKind,
    /// `--max-beams`, `--max-grid-points`, `--max-work` (the other limits keep their defaults).
    pub limits: Limits,
    /// Where the results go.
    pub out: &'a Path,
}

/// The solver that runs on `device`, and where the choice came from (for the results file);
/// a named solver the device cannot run is an error naming both.
fn pick_solver(solver: Option<SolverArg>, device: DeviceKind) -> Result<(SolverArg, &'static str), String> {
    match (solver, device) {
        (None, DeviceKind::Cpu) => Ok((SolverArg::Expm, "default for --device cpu")),
        (None, DeviceKind::Gpu) => Ok((SolverArg::Taylor, "default for --device gpu")),
        (Some(SolverArg::Taylor), DeviceKind::Cpu) => Err("--solver taylor runs on the GPU only: add --device gpu, or pick eigen or expm for the CPU".to_owned()),
        (Some(s @ (SolverArg::Eigen | SolverArg::Expm)), DeviceKind::Gpu) => Err(format!(
            "--solver {} runs on the CPU only (f64); the GPU propagates by f32 Taylor steps: use --device cpu, or --solver taylor (the GPU default)",
            if s == SolverArg::Eigen { "eigen" } else { "expm" }
        )),
        (Some(s), _) => Ok((s, "--solver")),
    }
}

/// The cases to run: the cases file, or the one case of `--cif` and its flags; a mix is an error.
fn cases(args: &Args<'_>) -> Result<CasesFile, String> {
    match (args.cases, &args.cif.cif) {
        (Some(path), None) => {
            let given = args.cif.given();
            if !given.is_empty() {
                return Err(format!("{}: only with --cif (these flags describe its one case; a cases file has its own)", given.join(", ")));
            }
            let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            parse_cases(&text).map_err(|e| format!("{}: {e}", path.display()))
        }
        (None, Some(cif)) => crate::bloch_cif::cases_from_flags(cif, args.cif),
        (Some(_), Some(_)) => Err("give a cases file or --cif, not both".to_owned()),
        (None, None) => Err("give a cases file, or --cif with --kv, --zone and --thickness".to_owned()),
    }
}

/// Reads the cases (file or flags), simulates every case on the device, writes the results JSON.
pub fn run(args: &Args<'_>) -> Result<(), String> {
    // Checked before anything is read or a GPU is acquired: a wrong pairing costs nothing.
    let (solver, solver_from) = pick_solver(args.solver, args.device)?;
    let file = cases(args)?;
    let start = std::time::Instant::now();
    let conventions = match args.conventions {
        ConventionsArg::Diffbloch => Conventions::DiffBloch,
        ConventionsArg::Abtem => Conventions::Abtem,
    };
    let (mut json, cases) = match (args.device, solver) {
        (DeviceKind::Gpu, _) => {
            let ctx = crate::gpu_device::context()?;
            let gpu = pollster::block_on(PropagateGpu::new(&ctx)).map_err(|e| e.to_string())?;
            // The GPU path reports no per-case progress: a spinner says it is working.
            let bar = crate::progress::Bar::new("bloch simulate", "cases");
            bar.spin(&format!("{} case(s) on the GPU", file.cases.len()));
            let cases = pollster::block_on(simulate_gpu_within(&file, conventions, &gpu, &args.limits));
            drop(bar);
            let json = serde_json::json!({
                "solver": "taylor-f32",
                "solver_from": solver_from,
                "conventions": conventions,
                "device": format!("gpu {}", ctx.describe()),
                "cases": cases,
            });
            (json, cases)
        }
        (DeviceKind::Cpu, solver) => {
            let solver = if solver == SolverArg::Eigen { Solver::Eigen } else { Solver::Expm };
            let results = simulate_with_progress(&file, Method { solver, conventions }, &args.limits, &mut crate::progress::counter("bloch simulate", "cases"));
            let mut json = serde_json::to_value(&results).map_err(|e| e.to_string())?;
            if let Some(object) = json.as_object_mut() {
                object.insert("solver_from".to_owned(), solver_from.into());
                object.insert("device".to_owned(), "cpu".into());
            }
            (json, results.cases)
        }
    };
    crate::bloch_geometry::annotate(&file, &mut json["cases"], &args.limits);
    if let Some(object) = json.as_object_mut() {
        object.insert("geometry".to_owned(), crate::bloch_geometry::DESCRIPTION.into());
    }
    let failed_count = cases.iter().filter(|c| c.error.is_some()).count();
    crate::progress::summary(&format!(
        "bloch simulate: {} case(s), {failed_count} failed; {}; {}",
        cases.len(),
        crate::progress::seconds(start.elapsed().as_secs_f64()),
        json["device"].as_str().unwrap_or("?"),
    ));
    std::fs::write(args.out, json.to_string()).map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    let failed: Vec<String> = cases.iter().filter_map(|c| c.error.as_ref().map(|e| format!("{}: {e}", c.id))).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of {} case(s) failed (results written to {}):\n  {}", failed.len(), cases.len(), args.out.display(), failed.join("\n  ")))
    }
}
