//! `scatterlab bloch refine <experiment.yaml|dir> [--optimizer lm|adam|lbfgs] [--device cpu|gpu]
//! [--max-iter N] --out <dir>`: refines the start structure of a diffBloch experiment directory
//! against its PETS intensities and writes `refined.cif`, `result.json` and
//! `observed_vs_calculated.csv` into `--out`. Only the three files the YAML names are read.
//!
//! The optimiser defaults to Levenberg–Marquardt with the exact Jacobian; `adam` / `lbfgs` run the
//! first-order optimisers on diffBloch's objective, Adam for `refinement.steps` epochs at the
//! YAML's learning rate (diffBloch's configured run) unless `--max-iter` says otherwise. The
//! refinement's model (intensities and Jacobian) runs on `--device`: the CPU (f64) or the GPU
//! (f32 Taylor propagation, LM only; a frame too large for the kernel is an error naming it,
//! never a silent CPU run). The LM arithmetic and the reported metrics are f64 on the host.

use std::path::Path;
use std::time::Instant;

use clap::ValueEnum;
use scatterlab_bloch::refine::outcome::finish;
use scatterlab_bloch::refine::problem::Objective;
use scatterlab_bloch::refine::{observed_vs_calculated_csv, refined_cif, Experiment, LmOptions, ModelDevice, Optimizer, Refiner};
use scatterlab_core::{CancelToken, DeviceKind};

use crate::progress;

/// `--optimizer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OptimizerArg {
    /// Levenberg–Marquardt on the weighted residuals with the exact Jacobian (default).
    Lm,
    /// Adam on the mean per-frame wR2 (diffBloch's configured optimiser and learning rate).
    Adam,
    /// L-BFGS on the mean per-frame wR2.
    Lbfgs,
}

/// `--objective`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ObjectiveArg {
    /// χ² with the file's σ, frame scales optimal (maximum likelihood; the default).
    Chi2,
    /// Σ wR2² with Klar's weights (diffBloch's residual).
    Wr2,
}

/// The command's arguments.
pub struct Args<'a> {
    /// The experiment directory or its `experiment.yaml`.
    pub experiment: &'a Path,
    /// `--optimizer`.
    pub optimizer: OptimizerArg,
    /// `--device`.
    pub device: DeviceKind,
    /// `--max-iter`.
    pub max_iter: Option<usize>,
    /// `--objective` (LM only).
    pub objective: ObjectiveArg,
    /// `--out` directory.
    pub out: &'a Path,
}

/// Runs the command.
pub fn run(args: &Args<'_>) -> Result<(), String> {
    let experiment = Experiment::load(args.experiment).map_err(|e| e.to_string())?;
    for warning in &experiment.warnings {
        progress::summary(&format!("warning: {warning}"));
    }
    let optimizer = match args.optimizer {
        OptimizerArg::Lm => Optimizer::Lm,
        OptimizerArg::Adam => Optimizer::Adam,
        OptimizerArg::Lbfgs => Optimizer::Lbfgs,
    };
    let defaults = LmOptions::default();
    let max_iterations = args.max_iter.unwrap_or(if optimizer == Optimizer::Adam { experiment.config.refinement.steps } else { defaults.max_iterations });
    let objective = match args.objective {
        ObjectiveArg::Chi2 => Objective::Chi2,
        ObjectiveArg::Wr2 => Objective::Wr2,
    };
    if objective != Objective::Chi2 && optimizer != Optimizer::Lm {
        return Err("--objective applies to --optimizer lm; adam and lbfgs minimise diffBloch's mean wR2".to_owned());
    }
    let options = LmOptions { optimizer, max_iterations, learning_rate: experiment.config.refinement.lr, objective, ..defaults };
    if args.device == DeviceKind::Gpu && optimizer != Optimizer::Lm {
        return Err(format!(
            "bloch refine: --optimizer {} runs on the CPU only (its reverse-mode gradient has no GPU path); use --optimizer lm with --device gpu",
            optimizer.name()
        ));
    }
    let device = match args.device {
        DeviceKind::Cpu => ModelDevice::Cpu,
        DeviceKind::Gpu => {
            let ctx = crate::gpu_device::context()?;
            pollster::block_on(ModelDevice::gpu(&ctx)).map_err(|e| e.to_string())?
        }
    };
    std::fs::create_dir_all(args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;

    let started = Instant::now();
    let mut refiner = pollster::block_on(Refiner::new_on(experiment, options, device)).map_err(|e| e.to_string())?;
    let mut bar = progress::Bar::new(&format!("refine {}", optimizer.name()), "iterations");
    let cancel = CancelToken::new();
    while !refiner.is_done() {
        let report = pollster::block_on(refiner.step_async(&cancel)).map_err(|e| e.to_string())?;
        bar.frames(report.iteration as u64, max_iterations as u64);
    }
    drop(bar);
    let seconds = started.elapsed().as_secs_f64();
    let finished = finish(&refiner, seconds).map_err(|e| e.to_string())?;
    let cif = refined_cif(&refiner.experiment().start_cif, &refiner.state().asu, &finished.uncertainties).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&finished.result).map_err(|e| e.to_string())?;
    for (name, text) in [("refined.cif", cif), ("result.json", json + "\n"), ("observed_vs_calculated.csv", observed_vs_calculated_csv(&finished.evaluation))] {
        let path = args.out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let r = &finished.result;
    progress::summary(&format!(
        "bloch refine: wR2 {:.5} (start {:.5}), R_obs {:.5}, {} iterations, {} evaluations, {} ({}), {}, {}",
        r.wr2,
        r.start.wr2,
        r.r_obs,
        r.iterations,
        r.evaluations,
        r.optimizer,
        r.stop,
        r.device,
        progress::seconds(seconds)
    ));
    Ok(())
}
