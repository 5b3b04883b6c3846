//! `scatterlab`: the native command line for batch work.
//!
//! ```text
//! scatterlab refl compute <cases.json> --device cpu|gpu [--out results.json]
//! scatterlab refl fit <task-or-model.json> [--method de|lm|mcmc] [--device cpu|gpu] [--seed N] [--out result.json]
//! scatterlab refl compute --model <model.json> [--q-grid start:stop:n] --device cpu|gpu [--out results.json]
//! scatterlab h5 ls <file.h5> [--attrs] [--json]
//! scatterlab stem info <master.h5> [--strict] [--scan ROWS,COLS]
//! scatterlab stem reduce <master.h5> [--center ROW,COL] [--bf R] [--adf INNER,OUTER] [--mrad] [--bin K] [--allow-missing] [--scan ROWS,COLS] [--device cpu|gpu] --out <dir>
//! scatterlab stem ssb <master.h5> [--center ROW,COL] [--bf R] [--rotation-deg A] [--transpose] [--C10 NM] [--C12 NM] [--phi12 RAD] [--dk INV_A_PER_PX] [--fit [--fit-rotation]] [--device cpu|gpu] --out <dir>
//! scatterlab bloch simulate <cases.json> [--solver eigen|expm] [--conventions diffbloch|abtem] [--device cpu|gpu] --out <results.json>
//! scatterlab bloch refine <experiment.yaml|dir> [--optimizer lm|adam|lbfgs] [--objective chi2|wr2] [--device cpu|gpu] [--max-iter N] --out <dir>
//! scatterlab bloch simulate --cif <f.cif> --kv KV --zone U,V,W --thickness T1,T2 [--g-max G] [--sg-max S] [--ref H,K,L] [--tilt TX,TY] … --out <results.json>
//! ```
//!
//! Long work draws a progress bar on stderr when it is a terminal; `refl fit` and `bloch
//! simulate` end with a one-line summary there; the global `--quiet` (`-q`) turns both off.

mod bloch_cif;
mod bloch_geometry;
mod bloch_refine;
mod bloch_simulate;
mod gpu_device;
mod h5_ls;
mod npy;
mod progress;
mod refl_compute;
mod refl_fit;
mod refl_model;
mod stem_info;
mod stem_open;
mod stem_reduce;
mod stem_ssb;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use scatterlab_core::DeviceKind;

/// Command-line arguments.
#[derive(Parser)]
#[command(name = "scatterlab", version, about = "GPU-accelerated scattering: reflectivity, 4D-STEM, Bloch waves")]
struct Cli {
    /// No progress bars and no summary lines on stderr (bars are drawn only on a terminal anyway); errors still print.
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    domain: Domain,
}

#[derive(Subcommand)]
enum Domain {
    /// X-ray reflectivity.
    Refl {
        #[command(subcommand)]
        command: ReflCommand,
    },
    /// HDF5 files.
    H5 {
        #[command(subcommand)]
        command: H5Command,
    },
    /// 4D-STEM.
    Stem {
        #[command(subcommand)]
        command: StemCommand,
    },
    /// Bloch-wave electron diffraction.
    Bloch {
        #[command(subcommand)]
        command: BlochCommand,
    },
}

#[derive(Subcommand)]
enum BlochCommand {
    /// Simulate every case of a cases file (the fixture format), or one zone-axis case from a CIF
    /// (--cif with --kv, --zone, --thickness): beams (hkl, lab g, Sg) and intensities per thickness.
    Simulate {
        /// Cases file (`crystals` with CIF text, `cases` with energy, orientation, radii, thicknesses).
        #[arg(required_unless_present = "cif", conflicts_with = "cif")]
        cases: Option<PathBuf>,
        #[command(flatten)]
        cif: bloch_cif::CifFlags,
        /// Propagator [default: expm on cpu, taylor on gpu]. eigen and expm run on the CPU (f64), taylor on the GPU
        /// (f32); one the device cannot run is an error, never swapped. The results' "solver" and "solver_from" say which ran and why.
        #[arg(long, value_enum)]
        solver: Option<bloch_simulate::SolverArg>,
        /// Conventions of the structure matrix and amplitudes.
        #[arg(long, value_enum, default_value = "diffbloch")]
        conventions: bloch_simulate::ConventionsArg,
        /// Device: cpu (f64 eigen/expm) or gpu (f32 Taylor propagation in WGSL, at most 512 beams per matrix). No GPU adapter is an error (no fallback to the CPU).
        #[arg(long, default_value = "cpu")]
        device: DeviceKind,
        /// Most beams in one structure matrix (the solvers hold ~10 N² complex numbers); a larger beam set is that case's error.
        #[arg(long, default_value_t = scatterlab_bloch::Limits::default().max_beams)]
        max_beams: usize,
        /// Most points of the hkl box of a structure-factor grid (radius 2·g_solve + 0.5); a larger grid is that case's error.
        #[arg(long, default_value_t = scatterlab_bloch::Limits::default().max_grid_points)]
        max_grid_points: u64,
        /// Most estimated solver work of one case, in 10⁹ complex multiply-adds (eigen ~10 N³ per matrix, expm ~12 N³ per
        /// matrix and thickness; ~5 per second per core); a heavier case is that case's error before anything is solved.
        #[arg(long, default_value_t = scatterlab_bloch::Limits::default().max_work / 1e9, value_parser = positive_budget)]
        max_work: f64,
        /// Where to write the results JSON.
        #[arg(long)]
        out: PathBuf,
    },
    /// Refine the start structure of a diffBloch experiment (experiment.yaml, its .cif_pets and
    /// start CIF) against the observed intensities: refined.cif, result.json and
    /// observed_vs_calculated.csv in --out.
    Refine {
        /// The experiment directory or its experiment.yaml.
        experiment: PathBuf,
        /// Optimiser: lm (Levenberg–Marquardt, exact Jacobian), adam or lbfgs (diffBloch's objective).
        #[arg(long, value_enum, default_value = "lm")]
        optimizer: bloch_refine::OptimizerArg,
        /// Device of the model (intensities and Jacobian): cpu (f64) or gpu (f32 Taylor, --optimizer lm only; a frame too large for the kernel is an error, never a silent CPU run).
        #[arg(long, default_value = "cpu")]
        device: DeviceKind,
        /// Most iterations (epochs for adam) [default: 50; adam: refinement.steps of the YAML].
        #[arg(long)]
        max_iter: Option<usize>,
        /// What lm minimises: chi2 (the file's σ; maximum likelihood) or wr2 (Klar's weights, diffBloch's residual).
        #[arg(long, value_enum, default_value = "chi2")]
        objective: bloch_refine::ObjectiveArg,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum H5Command {
    /// Print the tree of groups, datasets and links (shapes, types, chunking, filters).
    Ls {
        /// The HDF5 file.
        file: PathBuf,
        /// Also print every attribute with a preview of its value.
        #[arg(long)]
        attrs: bool,
        /// Print the tree as JSON instead.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum StemCommand {
    /// Summarise an acquisition: shapes, dtype, chunking, filters, calibration, mask, data files.
    Info {
        /// The Dectris master file (or a single file with /entry/data/data).
        master: PathBuf,
        /// Fail (non-zero exit) when a data file or the scan shape is missing.
        #[arg(long)]
        strict: bool,
        /// Scan shape ROWS,COLS when the file does not give it (or to override it).
        #[arg(long)]
        scan: Option<String>,
    },
    /// Virtual detectors, sum/mean/max patterns, centre of mass, DPC and iDPC as .npy files plus manifest.json.
    Reduce {
        /// The Dectris master file (or a single file with /entry/data/data).
        master: PathBuf,
        /// Beam centre ROW,COL in pixels (default: auto probe from the mean pattern).
        #[arg(long, allow_hyphen_values = true)]
        center: Option<String>,
        /// Bright-field radius in pixels (default: auto probe).
        #[arg(long)]
        bf: Option<f64>,
        /// ADF radii INNER,OUTER in pixels (default: 1.2 and 2.5 × the BF radius).
        #[arg(long)]
        adf: Option<String>,
        /// --bf and --adf are in mrad (converted with the convergence semi-angle over the measured BF radius).
        #[arg(long)]
        mrad: bool,
        /// Detector bin factor for `bin<K>_sum_dp` (≥ 2).
        #[arg(long)]
        bin: Option<usize>,
        /// Reduce the frames present when data files are missing: real products NaN and integer
        /// products 0 at the missing positions, present.npy marks the positions read.
        #[arg(long)]
        allow_missing: bool,
        /// Scan shape ROWS,COLS when the file does not give it (or to override it).
        #[arg(long)]
        scan: Option<String>,
        /// Device to run the fused pass on (cpu or gpu; no fallback).
        #[arg(long, default_value = "cpu")]
        device: DeviceKind,
        /// Output folder.
        #[arg(long)]
        out: PathBuf,
    },
    /// Single-sideband ptychography with known aberrations: ssb_object/phase/amplitude .npy plus manifest.json.
    Ssb {
        /// The Dectris master file (or a single file with /entry/data/data).
        master: PathBuf,
        /// Beam centre ROW,COL in pixels (default: auto probe from the mean pattern).
        #[arg(long, allow_hyphen_values = true)]
        center: Option<String>,
        /// Bright-field radius in pixels (default: auto probe).
        #[arg(long)]
        bf: Option<f64>,
        /// Scan rotation θ in degrees (default: from DPC, θ = −a, half turn by the physical iDPC).
        #[arg(long, allow_hyphen_values = true)]
        rotation_deg: Option<f64>,
        /// The detector is transposed (stored rows are the physical columns).
        #[arg(long)]
        transpose: bool,
        /// Defocus C10 in nm.
        #[arg(long = "C10", default_value_t = 0.0, allow_hyphen_values = true)]
        c10: f64,
        /// Two-fold astigmatism C12 in nm.
        #[arg(long = "C12", default_value_t = 0.0, allow_hyphen_values = true)]
        c12: f64,
        /// Astigmatism angle φ12 in rad.
        #[arg(long = "phi12", default_value_t = 0.0, allow_hyphen_values = true)]
        phi12: f64,
        /// Detector sampling in Å⁻¹ per pixel (default: semi-angle over the BF radius, over λ).
        #[arg(long)]
        dk: Option<f64>,
        /// Scan shape ROWS,COLS when the file does not give it (or to override it).
        #[arg(long)]
        scan: Option<String>,
        /// Fit C10, C12, φ12 from the data (phase-variance objective); --C10/--C12/--phi12 are the start.
        #[arg(long)]
        fit: bool,
        /// With --fit: fit the scan rotation too, from --rotation-deg or the DPC one.
        #[arg(long, requires = "fit")]
        fit_rotation: bool,
        /// Device: cpu (f64, complex128 object) or gpu (f32 WGSL reconstruction, complex64 object;
        /// no adapter is an error, never a fallback).
        #[arg(long, default_value = "cpu")]
        device: DeviceKind,
        /// Output folder.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum ReflCommand {
    /// Compute R_s and R_p for every case of a cases file (the fixture format), or evaluate a model.
    Compute {
        /// Cases file (`cases` list with id, energy_ev, q_inv_A and per-layer columns).
        #[arg(required_unless_present = "model", conflicts_with = "model")]
        cases: Option<PathBuf>,
        /// A model file (docs/refl-model.md), evaluated on its datasets' q grids.
        #[arg(long)]
        model: Option<PathBuf>,
        /// With --model: evaluate every dataset on this grid instead, `start:stop:n` in Å⁻¹.
        #[arg(long, requires = "model")]
        q_grid: Option<String>,
        /// Device to run on: cpu (f64) or gpu (f32 WGSL; tilted/biaxial models df64). Never falls back.
        #[arg(long, default_value = "cpu")]
        device: DeviceKind,
        /// With --device gpu: f32 (the fast recursion) or df64 (every model through the double-float
        /// 4×4 kernel, within 1e-6·R of the CPU's f64).
        #[arg(long, value_enum, default_value = "f32")]
        precision: gpu_device::GpuPrecision,
        /// Where to write the results JSON (stdout when absent).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Fit a model file or a fixture fit task (`refl-oracle-v1-fit`) to its data.
    Fit {
        /// The task or model file.
        input: PathBuf,
        /// de (+ LM polish), lm, or mcmc (after DE + LM).
        #[arg(long, value_enum, default_value = "de")]
        method: refl_fit::Method,
        /// Device for the batched evaluations: cpu (f64) or gpu (f32). LM runs on the CPU in f64.
        #[arg(long, default_value = "cpu")]
        device: DeviceKind,
        /// With --device gpu: f32 (the fast recursion) or df64 (every model through the double-float
        /// 4×4 kernel, within 1e-6·R of the CPU's f64).
        #[arg(long, value_enum, default_value = "f32")]
        precision: gpu_device::GpuPrecision,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Fit log R instead of R.
        #[arg(long)]
        log: bool,
        /// MCMC steps per walker.
        #[arg(long, default_value_t = 2000)]
        steps: usize,
        /// Write the MCMC samples to this CSV file.
        #[arg(long)]
        samples: Option<PathBuf>,
        /// Where to write the result JSON (stdout when absent).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// `--max-work`: a finite positive number (NaN would refuse every case with a confusing message).
fn positive_budget(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{text:?} is not a finite positive number")),
    }
}

/// Output piped into `head` and the like: end quietly when the reader goes away, as Unix tools
/// do, instead of panicking in `println!` with a backtrace (Rust ignores SIGPIPE by default).
fn quiet_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE at start-up, before any thread exists;
    // no handler of ours is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    // Batch work allocates and frees megabytes per step (Bloch tilts, STEM batches): keep them mapped.
    scatterlab_core::process::keep_freed_memory();
    quiet_broken_pipe();
    let cli = Cli::parse();
    progress::set_quiet(cli.quiet);
    let result = match cli.domain {
        Domain::Refl { command: ReflCommand::Compute { cases, model, q_grid, device, precision, out } } => match (cases, model) {
            (_, Some(model)) => refl_model::run(&model, q_grid.as_deref(), device, precision, out.as_deref()),
            // clap's `requires = "model"` does not fire next to the cases positional: a flag that
            // would do nothing in this mode is an error here instead of being ignored.
            (Some(_), None) if q_grid.is_some() => Err("--q-grid needs --model (a cases file has its own q grids)".to_owned()),
            (Some(cases), None) => refl_compute::run(&cases, device, precision, out.as_deref()),
            (None, None) => Err("give a cases file or --model".to_owned()),
        },
        Domain::Refl { command: ReflCommand::Fit { input, method, device, precision, seed, log, steps, samples, out } } => {
            refl_fit::run(&refl_fit::FitArgs { input: &input, method, device, seed, out: out.as_deref(), log, steps, samples: samples.as_deref(), precision })
        }
        Domain::H5 { command: H5Command::Ls { file, attrs, json } } => h5_ls::run(&file, attrs, json),
        Domain::Stem { command: StemCommand::Info { master, strict, scan } } => stem_info::run(&master, strict, scan.as_deref()),
        Domain::Stem { command: StemCommand::Reduce { master, center, bf, adf, mrad, bin, allow_missing, scan, device, out } } => {
            stem_reduce::run(&stem_reduce::Args { master: &master, center, bf, adf, mrad, bin, allow_missing, scan, device, out: &out })
        }
        Domain::Stem { command: StemCommand::Ssb { master, center, bf, rotation_deg, transpose, c10, c12, phi12, dk, scan, fit, fit_rotation, device, out } } => {
            stem_ssb::run(&stem_ssb::Args { master: &master, center, bf, rotation_deg, transpose, c10, c12, phi12, dk, scan, fit, fit_rotation, device, out: &out })
        }
        Domain::Bloch { command: BlochCommand::Simulate { cases, cif, solver, conventions, device, max_beams, max_grid_points, max_work, out } } => {
            let limits = scatterlab_bloch::Limits { max_beams, max_grid_points, max_work: max_work * 1e9, ..Default::default() };
            bloch_simulate::run(&bloch_simulate::Args { cases: cases.as_deref(), cif: &cif, solver, conventions, device, limits, out: &out })
        }
        Domain::Bloch { command: BlochCommand::Refine { experiment, optimizer, device, max_iter, objective, out } } => {
            bloch_refine::run(&bloch_refine::Args { experiment: &experiment, optimizer, device, max_iter, objective, out: &out })
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("scatterlab: {message}");
            ExitCode::FAILURE
        }
    }
}
