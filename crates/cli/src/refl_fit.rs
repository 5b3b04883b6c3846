//! `scatterlab refl fit`: fit a model file or a fixture fit task with DE (+ LM polish), LM or MCMC.

use std::path::Path;
use std::time::Instant;

use scatterlab_core::{CancelToken, DeviceKind};
use scatterlab_refl::fit::{self, DeOptions, LmOptions, McmcOptions, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use scatterlab_refl::Engine;
use serde::Serialize;

/// The fitting method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Differential evolution, polished by LM (uncertainties from LM).
    De,
    /// Levenberg–Marquardt from the model's start values.
    Lm,
    /// DE, LM, then the ensemble sampler (values = medians, errors = 68 % half-widths).
    Mcmc,
}

/// One fitted parameter.
#[derive(Serialize)]
struct ParamOut {
    value: f64,
    stderr: f64,
}

/// The result file.
#[derive(Serialize)]
struct FitOut {
    parameters: std::collections::BTreeMap<String, ParamOut>,
    chi2: f64,
    n_points: usize,
    evaluations: usize,
    /// DE generations (de, mcmc): equal to the app's and the npm package's for one seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    generations: Option<usize>,
    seconds: f64,
    device: String,
    method: String,
    backend: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    mcmc: Option<serde_json::Value>,
}

/// Command-line settings of a fit.
pub struct FitArgs<'a> {
    /// Task or model file.
    pub input: &'a Path,
    /// Method.
    pub method: Method,
    /// Device for the batched evaluations (LM always runs on the CPU in f64).
    pub device: DeviceKind,
    /// Random seed.
    pub seed: u64,
    /// Output file (stdout when absent).
    pub out: Option<&'a Path>,
    /// Fit log10 R instead of R.
    pub log: bool,
    /// MCMC steps.
    pub steps: usize,
    /// Where to write MCMC samples as CSV.
    pub samples: Option<&'a Path>,
    /// The GPU kernel's arithmetic (`--precision`).
    pub precision: crate::gpu_device::GpuPrecision,
}

/// Runs the fit and writes the result JSON.
pub fn run(args: &FitArgs<'_>) -> Result<(), String> {
    let text = scatterlab_refl::input::read_file_text(args.input).map_err(|e| e.to_string())?;
    let at = |e: scatterlab_refl::ReflError| format!("{}: {e}", args.input.display());
    // A file with a JSON syntax error is no fit task by its format: parse_json then reports the
    // syntax error at its real line and column (not a typo'd key met earlier).
    let file = if fit::task::is_fit_task(&text) { fit::task::task_to_model(&text).map_err(at)? } else { scatterlab_refl::input::parse_json(&text, "model file").map_err(at)? };
    let model = Model::new(file).map_err(at)?;
    let objective = Objective::new(&model, ObjectiveOptions { log_transform: args.log, roughness_limit: None }).map_err(at)?;
    let gpu = crate::gpu_device::reflectivity_pipeline(args.device)?;
    let engine = crate::gpu_device::reflectivity_engine(gpu.as_ref(), args.precision)?;
    let backend = match &gpu {
        None => "cpu f64".to_owned(),
        Some(p) => {
            // Tilted/biaxial models batch through the df64 4×4 kernel; uniaxial ones the f32
            // recursion, or the df64 4×4 kernel with --precision df64.
            let precision = if model.needs_general() || matches!(engine, Engine::GpuDf64(_)) { "df64 4x4" } else { "f32" };
            format!("{} {precision} (DE/MCMC batches), cpu f64 (LM)", p.context().describe())
        }
    };
    let cancel = CancelToken::new();
    let mut report = crate::progress::fit("refl fit");
    let start = Instant::now();
    let names: Vec<String> = objective.names().iter().map(|s| s.to_string()).collect();
    let lm_options = LmOptions::default();
    // LM stops early only when a step no longer improves χ² (its convergence test); reaching
    // the iteration limit is the other way out.
    let lm_stop = |r: &fit::LmResult| {
        if r.iterations >= lm_options.max_iterations {
            format!("LM stopped at its iteration limit ({})", r.iterations)
        } else {
            format!("LM converged in {} iterations", r.iterations)
        }
    };
    let mut stops = Vec::new();
    let mut generations = None;
    let (x, stderr, chi2, evaluations, mcmc) = match args.method {
        Method::Lm => {
            let r = fit::levenberg_marquardt(&objective, &objective.start(), &lm_options, &mut report, &cancel).map_err(at)?;
            stops.push(lm_stop(&r));
            (r.x, r.stderr, r.chi2, r.evaluations, None)
        }
        Method::De | Method::Mcmc => {
            let de = pollster::block_on(fit::differential_evolution(&objective, engine, &DeOptions { seed: args.seed, ..Default::default() }, None, &mut report, &cancel))
                .map_err(at)?;
            let lm = fit::levenberg_marquardt(&objective, &de.x, &lm_options, &mut report, &cancel).map_err(at)?;
            stops.push(if de.converged { format!("DE converged in {} generations", de.generations) } else { format!("DE stopped at its generation limit ({})", de.generations) });
            stops.push(lm_stop(&lm));
            generations = Some(de.generations);
            let (x, chi2) = if lm.chi2 <= de.chi2 { (lm.x.clone(), lm.chi2) } else { (de.x.clone(), de.chi2) };
            if args.method == Method::De {
                (x, lm.stderr, chi2, de.evaluations + lm.evaluations, None)
            } else {
                let options = McmcOptions { steps: args.steps, burn: args.steps / 4, seed: args.seed, ..Default::default() };
                let m = pollster::block_on(fit::ensemble_sampler(&objective, engine, &x, &lm.stderr, &options, &mut report, &cancel)).map_err(at)?;
                stops.push(format!("MCMC {} steps, acceptance {:.2}", args.steps, m.acceptance_fraction));
                if let Some(path) = args.samples {
                    let mut csv = names.join(",") + ",chi2\n";
                    for (s, c) in m.samples.iter().zip(&m.chi2) {
                        csv += &(s.iter().map(|v| format!("{v:e}")).collect::<Vec<_>>().join(",") + &format!(",{c}\n"));
                    }
                    std::fs::write(path, csv).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                }
                let half: Vec<f64> = m.upper_68.iter().zip(&m.lower_68).map(|(u, l)| 0.5 * (u - l)).collect();
                let summary = serde_json::json!({
                    "acceptance_fraction": m.acceptance_fraction,
                    "autocorrelation_time": m.autocorrelation_time,
                    "lower_68": m.lower_68, "upper_68": m.upper_68,
                    "lm_value": x, "lm_stderr": lm.stderr, "samples": m.samples.len(),
                });
                let chi2_median = pollster::block_on(objective.chi2_batch(Engine::Cpu, std::slice::from_ref(&m.median))).map_err(at)?[0];
                (m.median, half, chi2_median, de.evaluations + lm.evaluations + m.evaluations, Some(summary))
            }
        }
    };
    // Never a silent null in the result: χ² and every fitted value must be finite.
    if !chi2.is_finite() {
        return Err(format!("{}: the fit ended with a non-finite χ² ({chi2}); the data or the model overflow at the fitted parameters", args.input.display()));
    }
    if let Some((name, v)) = names.iter().zip(&x).find(|(_, v)| !v.is_finite()) {
        return Err(format!("{}: the fit ended with a non-finite value of parameter '{name}' ({v})", args.input.display()));
    }
    let seconds = start.elapsed().as_secs_f64();
    drop(report); // clears the bar before the summary line
    let method = match args.method {
        Method::De => "de + lm",
        Method::Lm => "lm",
        Method::Mcmc => "de + lm + mcmc",
    };
    let n = objective.n_points();
    crate::progress::summary(&format!(
        "refl fit: {method}: χ² = {chi2:.6e} (χ²/N = {:.4}, N = {n}); {}; {evaluations} evaluations; {}; {backend}",
        chi2 / n.max(1) as f64,
        stops.join(", "),
        crate::progress::seconds(seconds),
    ));
    let out = FitOut {
        parameters: names.into_iter().zip(x.iter().zip(&stderr)).map(|(n, (&value, &stderr))| (n, ParamOut { value, stderr })).collect(),
        chi2,
        n_points: objective.n_points(),
        evaluations,
        generations,
        seconds,
        device: args.device.name().to_owned(),
        method: format!("{:?}", args.method).to_lowercase(),
        backend,
        mcmc,
    };
    let json = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
    match args.out {
        Some(path) => std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            println!("{json}");
            Ok(())
        }
    }
}
