//! `scatterlab refl compute`: every case of a cases file on the chosen device.
//! A case that fails (bad input, or a non-finite R) gets an `"error"` entry and the others still
//! run; the command then exits non-zero after writing the results, listing the failed cases.

use std::path::Path;

use scatterlab_core::{DeviceKind, Provenance};
use scatterlab_refl::cases::{parse_cases, CaseInput, CaseResult, ResultsFile};
use scatterlab_refl::{compute_each, CurveRequest, ReflError, Stack};

/// A case ready for the engine, or why it is not.
type Prepared = Result<(CaseInput, Stack), ReflError>;

/// Reads `cases_path`, computes on `device`, writes JSON to `out` (or stdout).
pub fn run(cases_path: &Path, device: DeviceKind, precision: crate::gpu_device::GpuPrecision, out: Option<&Path>) -> Result<(), String> {
    let text = scatterlab_refl::input::read_file_text(cases_path).map_err(|e| e.to_string())?;
    let parsed = parse_cases(&text).map_err(|e| format!("{}: {e}", cases_path.display()))?;
    let gpu = crate::gpu_device::reflectivity_pipeline(device)?;
    let engine = crate::gpu_device::reflectivity_engine(gpu.as_ref(), precision)?;
    let backend = match &gpu {
        None => "cpu f64".to_owned(),
        Some(pipeline) => format!("{} {}", pipeline.context().describe(), engine.precision()),
    };

    // Valid cases go to the engine as one batch (one GPU dispatch); invalid ones report their error.
    let (ids, prepared): (Vec<String>, Vec<Prepared>) = parsed
        .into_iter()
        .map(|case| {
            let prepared = case.input.and_then(|input| {
                let stack = input.stack()?;
                CurveRequest { stack: &stack, energy_ev: input.energy_ev, q: &input.q }.validate()?;
                Ok((input, stack))
            });
            (case.id, prepared)
        })
        .unzip();
    let requests: Vec<CurveRequest<'_>> =
        prepared.iter().filter_map(|p| p.as_ref().ok()).map(|(input, stack)| CurveRequest { stack, energy_ev: input.energy_ev, q: &input.q }).collect();
    // A curve whose R is not finite comes back as its own error (the library's output check).
    let mut computed = pollster::block_on(compute_each(engine, &requests)).map_err(|e| e.to_string())?.into_iter();

    let cases: Vec<CaseResult> = prepared
        .iter()
        .zip(ids)
        .map(|(p, id)| match p.as_ref().map(|_| computed.next()) {
            Ok(Some(Ok(r))) => CaseResult { id, r_s: Some(r.r_s), r_p: Some(r.r_p), error: None },
            Ok(Some(Err(e))) => CaseResult { id, r_s: None, r_p: None, error: Some(e.to_string()) },
            Ok(None) => CaseResult { id, r_s: None, r_p: None, error: Some("the engine returned no result for this case".to_owned()) },
            Err(e) => CaseResult { id, r_s: None, r_p: None, error: Some(e.to_string()) },
        })
        .collect();
    let failed: Vec<String> = cases.iter().filter_map(|c| c.error.as_ref().map(|e| format!("case {}: {e}", c.id))).collect();
    let n_cases = cases.len();
    let accumulation = engine.precision();
    let provenance = Provenance::new(text.as_bytes(), vec![prepared.len()], "f64", device, &backend, accumulation);
    let results = ResultsFile { device: device.name().to_owned(), backend, cases, provenance };
    let json = serde_json::to_string(&results).map_err(|e| e.to_string())?;
    let written_to = match out {
        Some(path) => {
            std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            path.display().to_string()
        }
        None => {
            println!("{json}");
            "stdout".to_owned()
        }
    };
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of {n_cases} case(s) failed (results written to {written_to}):\n  {}", failed.len(), failed.join("\n  ")))
    }
}
