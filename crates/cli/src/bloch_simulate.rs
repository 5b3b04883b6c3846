//! `scatterlab bloch simulate <cases.json> [--solver eigen|expm] [--conventions diffbloch|abtem]
//! [--device cpu|gpu] --out <results.json>`: every case of a Bloch cases file (the fixture's
//! format; reference results in it are never read) as `{"cases": [{"id", "hkl", "I"}]}`.
//! A case that fails gets an `"error"` entry and the others still run; the command then exits
//! non-zero after writing the file, naming the failed cases.

use std::path::Path;

use clap::ValueEnum;
use scatterlab_bloch::gpu::{simulate_gpu, PropagateGpu};
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::simulate::{parse_cases, simulate};
use scatterlab_bloch::solve::Solver;
use scatterlab_core::DeviceKind;

/// `--solver`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SolverArg {
    /// Hermitian eigendecomposition, one per orientation for the whole thickness series (non-absorptive cases only).
    Eigen,
    /// Padé-13 scaling-and-squaring matrix exponential per thickness (any case; required with absorption).
    Expm,
}

/// `--conventions`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ConventionsArg {
    /// diffBloch 0.2: U0 in K, M once on the diagonal.
    Diffbloch,
    /// abTEM 1.0: K = 1/λ, M² on the diagonal, physical amplitudes M·ψ′.
    Abtem,
}

/// Reads `cases_path`, simulates every case on `device`, writes the results JSON to `out`.
pub fn run(cases_path: &Path, solver: SolverArg, conventions: ConventionsArg, device: DeviceKind, out: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(cases_path).map_err(|e| format!("cannot read {}: {e}", cases_path.display()))?;
    let file = parse_cases(&text).map_err(|e| format!("{}: {e}", cases_path.display()))?;
    let method = Method {
        solver: match solver {
            SolverArg::Eigen => Solver::Eigen,
            SolverArg::Expm => Solver::Expm,
        },
        conventions: match conventions {
            ConventionsArg::Diffbloch => Conventions::DiffBloch,
            ConventionsArg::Abtem => Conventions::Abtem,
        },
    };
    let (json, cases) = match device {
        DeviceKind::Cpu => {
            let results = simulate(&file, method);
            (serde_json::to_value(&results).map_err(|e| e.to_string())?, results.cases)
        }
        DeviceKind::Gpu => {
            // The GPU propagates by f32 Taylor steps (shaders/bloch/propagate.wgsl), whatever
            // --solver says: the file says so instead of pretending to be eigen or expm.
            let ctx = crate::gpu_device::context()?;
            let gpu = pollster::block_on(PropagateGpu::new(&ctx)).map_err(|e| e.to_string())?;
            let cases = pollster::block_on(simulate_gpu(&file, method.conventions, &gpu));
            let json = serde_json::json!({
                "solver": "taylor-f32",
                "conventions": method.conventions,
                "device": format!("gpu {}", ctx.describe()),
                "cases": cases,
            });
            (json, cases)
        }
    };
    std::fs::write(out, json.to_string()).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    let failed: Vec<String> = cases.iter().filter_map(|c| c.error.as_ref().map(|e| format!("{}: {e}", c.id))).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of {} case(s) failed (results written to {}):\n  {}", failed.len(), cases.len(), out.display(), failed.join("\n  ")))
    }
}
