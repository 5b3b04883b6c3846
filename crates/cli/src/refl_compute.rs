//! `scatterlab refl compute`: every case of a cases file on the chosen device.
//! A case that fails gets an `"error"` entry; the others still run.

use std::path::Path;

use scatterlab_core::{DeviceKind, Provenance};
use scatterlab_refl::cases::{parse_cases, CaseInput, CaseResult, ResultsFile};
use scatterlab_refl::{compute, CurveRequest, Engine, ReflError, Stack};

/// A case ready for the engine, or why it is not.
type Prepared = Result<(CaseInput, Stack), ReflError>;

/// Reads `cases_path`, computes on `device`, writes JSON to `out` (or stdout).
pub fn run(cases_path: &Path, device: DeviceKind, out: Option<&Path>) -> Result<(), String> {
    let text = std::fs::read_to_string(cases_path).map_err(|e| format!("cannot read {}: {e}", cases_path.display()))?;
    let parsed = parse_cases(&text).map_err(|e| format!("{}: {e}", cases_path.display()))?;
    let gpu = crate::gpu_device::reflectivity_pipeline(device)?;
    let (engine, backend) = match &gpu {
        None => (Engine::Cpu, "cpu f64".to_owned()),
        Some(pipeline) => (Engine::Gpu(pipeline), format!("{} f32", pipeline.context().describe())),
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
    let requests: Vec<CurveRequest<'_>> = prepared
        .iter()
        .filter_map(|p| p.as_ref().ok())
        .map(|(input, stack)| CurveRequest { stack, energy_ev: input.energy_ev, q: &input.q })
        .collect();
    let mut computed = pollster::block_on(compute(engine, &requests)).map_err(|e| e.to_string())?.into_iter();

    let cases = prepared
        .iter()
        .zip(ids)
        .map(|(p, id)| match p {
            Ok(_) => {
                let r = computed.next().unwrap_or_default();
                CaseResult { id, r_s: Some(r.r_s), r_p: Some(r.r_p), error: None }
            }
            Err(e) => CaseResult { id, r_s: None, r_p: None, error: Some(e.to_string()) },
        })
        .collect();
    let accumulation = if gpu.is_some() { "f32" } else { "f64" };
    let provenance = Provenance::new(text.as_bytes(), vec![prepared.len()], "f64", device, &backend, accumulation);
    let results = ResultsFile { device: device.name().to_owned(), backend, cases, provenance };
    let json = serde_json::to_string(&results).map_err(|e| e.to_string())?;
    match out {
        Some(path) => std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            println!("{json}");
            Ok(())
        }
    }
}
