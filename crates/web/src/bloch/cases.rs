//! `lab.blochSimulateCases(casesJsonText, options)`: the cases of a Bloch cases file — the format
//! `scatterlab bloch simulate <cases.json>` reads (`scatterlab_bloch::simulate::CasesFile`, the
//! fixture's `reference.json` included: explicit orientation matrices and beam-selection radii;
//! its reference results are never read) — run on the CPU (f64, `simulate_within`) or the GPU
//! (f32, `simulate_gpu_within`), the CLI's library calls with the default limits and diffBloch's
//! conventions. As in the CLI, a case that fails carries its error and the others still run.

use scatterlab_bloch::beams::Hkl;
use scatterlab_bloch::gpu::simulate_gpu_within;
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::simulate::{parse_cases, simulate_within, CaseOutput, CasesFile};
use scatterlab_bloch::Limits;
use serde_json::Value;

use super::engine::{parse_engine, Engine, GpuKernel};
use crate::options::{object, strings};

const OP: &str = "blochSimulateCases";
const KNOWN: [&str; 3] = ["device", "solver", "ids"];

/// The options of one `blochSimulateCases` call (`null` = every case on the CPU with expm).
#[derive(Clone, Debug, PartialEq)]
pub struct CasesOptions {
    /// What runs the cases.
    pub engine: Engine,
    /// The cases to run, in this order (default: every case of the file, in its order).
    pub ids: Option<Vec<String>>,
}

/// Reads the options: `device`, `solver` (as `blochSimulate`'s) and `ids`.
pub fn parse_options(v: &Value) -> Result<CasesOptions, String> {
    let Some(m) = object(v, OP, &KNOWN)? else { return Ok(CasesOptions { engine: Engine::Cpu(Default::default()), ids: None }) };
    let ids = strings(m, "ids", OP)?;
    if ids.as_ref().is_some_and(Vec::is_empty) {
        return Err(format!("{OP}: options.ids must name at least one case (or be left out for all)"));
    }
    Ok(CasesOptions { engine: parse_engine(m, OP)?, ids })
}

/// One case's result: beams, thicknesses and `I[thickness][beam]` flat, or why it failed.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    /// The case id.
    pub id: String,
    /// Beams sorted by (h, k, l) (rocking cases: the union of the tilts'); empty on failure.
    pub hkl: Vec<Hkl>,
    /// The case's thicknesses (Å), the rows of `intensities`.
    pub thicknesses: Vec<f64>,
    /// Thickness-major `thicknesses.len() × hkl.len()`; empty on failure.
    pub intensities: Vec<f64>,
    /// Why the case failed (the CLI's per-case `error`).
    pub error: Option<String>,
}

/// The file `text` with only the cases of `ids` (in that order); an unknown or repeated id is an
/// error naming it.
fn select(text: &str, ids: Option<&[String]>) -> Result<CasesFile, String> {
    let mut file = parse_cases(text).map_err(|e| format!("{OP}: {e}"))?;
    let Some(ids) = ids else { return Ok(file) };
    let mut picked = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(format!("{OP}: options.ids[{i}]: case {id:?} is listed twice"));
        }
        let case = file.cases.iter().find(|c| &c.id == id).ok_or_else(|| {
            let known: Vec<&str> = file.cases.iter().map(|c| c.id.as_str()).collect();
            format!("{OP}: options.ids[{i}]: no case {id:?} in the file (cases: {})", known.join(", "))
        })?;
        picked.push(case.clone());
    }
    file.cases = picked;
    Ok(file)
}

/// Runs the cases of cases-file text `text` picked by `o`; `gpu` is the kernel for `device:
/// "gpu"` (acquired by the caller). Rejects only for a file that cannot be read or a bad option.
pub async fn simulate_cases(text: &str, o: &CasesOptions, gpu: Option<&GpuKernel>) -> Result<Vec<CaseResult>, String> {
    let file = select(text, o.ids.as_deref())?;
    let limits = Limits::default();
    let outputs: Vec<CaseOutput> = match (o.engine, gpu) {
        (Engine::Cpu(solver), _) => simulate_within(&file, Method { solver, conventions: Conventions::DiffBloch }, &limits).cases,
        (Engine::Gpu, Some(kernel)) => simulate_gpu_within(&file, Conventions::DiffBloch, &kernel.propagate, &limits).await,
        (Engine::Gpu, None) => return Err(format!("{OP}: device \"gpu\": no GPU kernel was acquired")),
    };
    Ok(file
        .cases
        .iter()
        .zip(outputs)
        .map(|(case, out)| CaseResult {
            id: out.id,
            hkl: out.hkl.unwrap_or_default(),
            thicknesses: case.thicknesses_a.clone(),
            intensities: out.intensities.map(|rows| rows.concat()).unwrap_or_default(),
            error: out.error,
        })
        .collect())
}
