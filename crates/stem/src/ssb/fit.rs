//! The aberration fit: C10, C12, φ12 (and optionally the scan rotation) from the data alone by
//! minimising [`PhaseVariance`] (quantem's objective) in three levels of the same loss:
//!
//! 1. `grid`: every point of a grid over C10 × (C12 cos 2φ12, C12 sin 2φ12) inside the search
//!    ranges, plus the start, on ~32 BF pixels and the spectra cropped to `|ν| ≲ k_α/2`. The loss
//!    is a flat plateau with a narrow basin (it drops only where every pixel's residual shift
//!    `λ ΔC k_b` is below the features), so the grid must be dense, hence the smallest level;
//!    its spacing keeps that shift at the aperture edge ≤ 0.8/k_α.
//! 2. `coarse`: Nelder–Mead from the best few grid points on ~128 pixels cropped to `|ν| ≲ k_α`.
//! 3. `full`: Nelder–Mead polish on every BF pixel and the whole scan spectrum.
//!
//! Astigmatism is searched in Cartesian form, so no angle wraps and C12 = 0 is an interior point.

use scatterlab_core::CancelToken;
use serde::Serialize;

use super::simplex::nelder_mead;
use super::{Aberrations, BfStack, CpuLosses, LossBackend, Optics, PhaseVariance, Trial};
use crate::reduce::ReduceError;

/// What the fit searches and how much it may spend.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FitOptions {
    /// The grid's C10 range, nm (default ±50).
    pub c10_range_nm: [f64; 2],
    /// The grid's largest C12, nm (default 20; φ12 covers [0, π)).
    pub c12_max_nm: f64,
    /// Run the grid (default); without it the polish starts from the given aberrations.
    pub global: bool,
    /// Fit the scan rotation too (in the local stages, from the given θ). Weakly determined at
    /// small aberrations: a θ error δ moves each `O_b` by only ~`λ ΔC k_b δ`.
    pub fit_rotation: bool,
    /// Most loss evaluations on the full data (the polish; default 60).
    pub max_full_evaluations: usize,
    /// Threads (`None`: every core; always 1 on wasm).
    pub threads: Option<usize>,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions { c10_range_nm: [-50.0, 50.0], c12_max_nm: 20.0, global: true, fit_rotation: false, max_full_evaluations: 60, threads: None }
    }
}

/// One loss evaluation of the fit, in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LossPoint {
    /// 1-based evaluation number over the whole fit.
    pub evaluation: usize,
    /// `grid`, `coarse` or `full` (losses compare only within a level).
    pub level: &'static str,
    /// The loss.
    pub loss: f64,
    /// The trial's C10, nm.
    #[serde(rename = "C10_nm")]
    pub c10_nm: f64,
    /// Its C12, nm.
    #[serde(rename = "C12_nm")]
    pub c12_nm: f64,
    /// Its φ12, rad in [0, π).
    pub phi12_rad: f64,
    /// Its scan rotation, degrees.
    pub rotation_deg: f64,
}

/// A level of the loss: its grid and pixels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FitLevel {
    /// Spectrum grid (rows, cols).
    pub grid: [usize; 2],
    /// BF pixels in the loss.
    pub bf_pixels: usize,
    /// Evaluations spent on it.
    pub evaluations: usize,
}

/// The fit's result and how it got there.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FitReport {
    /// The fitted aberrations.
    pub aberrations: Aberrations,
    /// The scan rotation, degrees (fitted when `options.fit_rotation`, else the given one).
    pub rotation_deg: f64,
    /// The loss on the full data at the result.
    pub loss: f64,
    /// Evaluations in all.
    pub evaluations: usize,
    /// The levels: grid, coarse, full.
    pub levels: [FitLevel; 3],
    /// Grid spacing used in C10 and in each astigmatism component, nm.
    pub grid_step_nm: f64,
    /// Threads used.
    pub threads: usize,
    /// What was asked.
    pub options: FitOptions,
    /// Every evaluation in order.
    pub loss_curve: Vec<LossPoint>,
}

fn trial_of(ab: &Aberrations, rotation_deg: f64) -> Trial {
    let (s, c) = (2.0 * ab.phi12_rad).sin_cos();
    Trial { c10_nm: ab.c10_nm, c12a_nm: ab.c12_nm * c, c12b_nm: ab.c12_nm * s, rotation_deg }
}

/// The aberrations of a trial: C12 ≥ 0, φ12 in [0, π).
pub fn aberrations_of(t: &Trial) -> Aberrations {
    let c12 = t.c12a_nm.hypot(t.c12b_nm);
    let phi = if c12 > 0.0 { (0.5 * t.c12b_nm.atan2(t.c12a_nm)).rem_euclid(std::f64::consts::PI) } else { 0.0 };
    Aberrations { c10_nm: t.c10_nm, c12_nm: c12, phi12_rad: phi }
}

fn check(v: f64, name: &str, what: &str) -> Result<f64, ReduceError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(ReduceError::new(name, format!("{what} must be a finite number (got {v})")))
    }
}

/// An even crop of `n` keeping `|ν| < f` (Å⁻¹) for step `step`, at least 16 (or `n`).
fn crop(n: usize, f: f64, step: f64) -> usize {
    let m = (2.0 * f * n as f64 * step).ceil().max(0.0) as usize;
    (m + m % 2).clamp(16.min(n), n)
}

/// Records evaluations (loss curve, progress) and checks cancellation.
struct Recorder<'a> {
    curve: Vec<LossPoint>,
    total: u64,
    progress: &'a mut dyn FnMut(u64, u64),
    cancel: &'a CancelToken,
    backend: &'a mut dyn LossBackend,
}

/// C10 of a trial that would have no aberration at all, nm.
///
/// With χ ≡ 0, `W_b = A(k_b − ν) − A(k_b + ν)` vanishes wherever both discs overlap the
/// central one, so the SSB drops those (noisy) frequencies; with any aberration they enter at
/// full weight (the correction is phase-only). The loss therefore has an isolated spike down at
/// exactly zero, below its true minimum on aberrated data (`dev_medium`: 0.083 there against
/// 0.092 at the true aberrations). The fit evaluates that point just beside it instead, where
/// `|Γ| ≫ 1e-8` at the lowest scan frequencies.
pub const ZERO_NUDGE_NM: f64 = 1e-3;

fn regular(t: &Trial) -> Trial {
    if t.c10_nm == 0.0 && t.c12a_nm == 0.0 && t.c12b_nm == 0.0 {
        Trial { c10_nm: ZERO_NUDGE_NM, ..*t }
    } else {
        *t
    }
}

impl Recorder<'_> {
    fn batch(&mut self, pv: &PhaseVariance, level: &'static str, trials: &[Trial]) -> Result<Vec<f64>, ReduceError> {
        let trials: Vec<Trial> = trials.iter().map(regular).collect();
        let index = ["grid", "coarse", "full"].iter().position(|&l| l == level).unwrap_or(0);
        let losses = self.backend.losses(index, pv, &trials, self.cancel)?;
        for (t, &loss) in trials.iter().zip(&losses) {
            let ab = aberrations_of(t);
            let evaluation = self.curve.len() + 1;
            self.curve.push(LossPoint { evaluation, level, loss, c10_nm: ab.c10_nm, c12_nm: ab.c12_nm, phi12_rad: ab.phi12_rad, rotation_deg: t.rotation_deg });
        }
        self.total = self.total.max(self.curve.len() as u64);
        (self.progress)(self.curve.len() as u64, self.total);
        Ok(losses)
    }

    /// Nelder–Mead on `pv` from `start` with steps `step` (nm, nm, nm[, deg]).
    fn polish(&mut self, pv: &PhaseVariance, level: &'static str, start: &Trial, step: &[f64], max_evals: usize, fit_rotation: bool) -> Result<(Trial, f64), ReduceError> {
        let d = if fit_rotation { 4 } else { 3 };
        let to_trial = |x: &[f64]| Trial { c10_nm: x[0], c12a_nm: x[1], c12b_nm: x[2], rotation_deg: if fit_rotation { x[3] } else { start.rotation_deg } };
        let x0 = [start.c10_nm, start.c12a_nm, start.c12b_nm, start.rotation_deg];
        let mut f = |x: &[f64]| -> Result<f64, ReduceError> { Ok(self.batch(pv, level, &[to_trial(x)])?[0]) };
        // Converged when the simplex spans under 5 % of its first steps (0.02 nm on the full
        // data of dev_medium: far below what the noise resolves).
        let (x, v) = nelder_mead(&x0[..d], &step[..d], 0.05, max_evals, &mut f)?;
        Ok((regular(&to_trial(&x)), v))
    }
}

/// Where a fit starts: the given aberrations and scan rotation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FitStart {
    /// C10, C12, φ12 (the grid's first point and, without the grid, the polish's start).
    pub aberrations: Aberrations,
    /// Scan rotation θ, degrees (fixed unless `fit_rotation`).
    pub rotation_deg: f64,
}

/// Fits the aberrations (and with `options.fit_rotation` the rotation) of a filled `stack` for
/// `optics` and scan step `step_a` (Å) from `start`; `progress` gets (evaluations done,
/// planned) after each batch of evaluations.
pub fn fit_aberrations(
    stack: &BfStack,
    optics: &Optics,
    step_a: f64,
    start: &FitStart,
    options: &FitOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &CancelToken,
) -> Result<FitReport, ReduceError> {
    fit_aberrations_on(stack, optics, step_a, start, options, &mut CpuLosses, progress, cancel)
}

/// [`fit_aberrations`] with the losses evaluated by `backend` (e.g. many trials per GPU dispatch).
#[allow(clippy::too_many_arguments)]
pub fn fit_aberrations_on(
    stack: &BfStack,
    optics: &Optics,
    step_a: f64,
    start: &FitStart,
    options: &FitOptions,
    backend: &mut dyn LossBackend,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &CancelToken,
) -> Result<FitReport, ReduceError> {
    let (o, rotation_deg) = (options, start.rotation_deg);
    backend.reset();
    let start = &start.aberrations;
    let [lo, hi] = o.c10_range_nm;
    check(lo, "C10 range", "the lower bound")?;
    check(hi, "C10 range", "the upper bound")?;
    if lo >= hi {
        return Err(ReduceError::new("C10 range", format!("empty search range [{lo}, {hi}] nm")));
    }
    if check(o.c12_max_nm, "C12 range", "the largest C12")? <= 0.0 {
        return Err(ReduceError::new("C12 range", format!("empty search range [0, {}] nm", o.c12_max_nm)));
    }
    if o.max_full_evaluations == 0 {
        return Err(ReduceError::new("fit evaluations", "at least one evaluation on the full data is needed"));
    }
    check(start.c10_nm, "C10", "the start")?;
    check(start.c12_nm, "C12", "the start")?;
    check(start.phi12_rad, "phi12", "the start")?;
    check(rotation_deg, "scan rotation", "the rotation")?;
    for (v, name) in [(step_a, "scan step"), (optics.wavelength_a, "wavelength"), (optics.k_alpha_inv_a, "convergence semi-angle"), (optics.dk_inv_a_per_px, "detector sampling")] {
        if !(v > 0.0 && v.is_finite()) {
            return Err(ReduceError::new(name, format!("must be a positive number (got {v})")));
        }
    }
    let threads = match o.threads {
        Some(0) => return Err(ReduceError::new("fit threads", "at least one thread is needed")),
        Some(t) => t,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let [rows, cols] = stack.scan;
    let nb = stack.pixels.len();
    let ka = optics.k_alpha_inv_a;
    let level = |f: f64, pixels: usize| -> Result<PhaseVariance, ReduceError> {
        PhaseVariance::new(stack, optics, step_a, nb.div_ceil(pixels).max(1), [crop(rows, f, step_a), crop(cols, f, step_a)], threads, cancel)
    };
    let grid_level = level(0.5 * ka, 32)?;
    let coarse_level = level(ka, 128)?;
    let full_level = PhaseVariance::new(stack, optics, step_a, 1, [rows, cols], threads, cancel)?;
    // Residual shift λ ΔC k_α at the aperture edge ≤ 0.8/k_α (Å): ΔC ≤ 0.8/(λ k_α²), in nm.
    let spacing = (0.08 / (optics.wavelength_a * ka * ka)).clamp(0.25, 10.0);
    let start_trial = trial_of(start, rotation_deg);
    let mut trials = vec![start_trial];
    if o.global {
        // Bounded so a wide range is an error, not hours of grid (±390 nm, 100 nm at 3.9 nm).
        let (n10, na) = (((hi - lo) / spacing).ceil() + 1.0, (o.c12_max_nm / spacing).ceil());
        if n10 > 200.0 {
            return Err(ReduceError::new("C10 range", format!("[{lo}, {hi}] nm needs {n10} grid steps of {spacing:.3} nm (at most 200)")));
        }
        if na > 25.0 {
            return Err(ReduceError::new("C12 range", format!("C12 up to {} nm needs {na} grid steps of {spacing:.3} nm (at most 25)", o.c12_max_nm)));
        }
        let (n10, na) = (n10 as usize, na as isize);
        let c10s: Vec<f64> = (0..n10).map(|i| lo + (hi - lo) * i as f64 / (n10 - 1) as f64).collect();
        for &c10 in &c10s {
            for i in -na..=na {
                for j in -na..=na {
                    let (a, b) = (i as f64 * spacing, j as f64 * spacing);
                    // Half a step of slack so the grid reaches the range's rim.
                    if a.hypot(b) <= o.c12_max_nm + 0.5 * spacing {
                        trials.push(Trial { c10_nm: c10, c12a_nm: a, c12b_nm: b, rotation_deg });
                    }
                }
            }
        }
    }
    let planned = trials.len() + CANDIDATES * COARSE_EVALS + o.max_full_evaluations;
    let mut rec = Recorder { curve: Vec::new(), total: planned as u64, progress, cancel, backend };
    let grid_losses = rec.batch(&grid_level, "grid", &trials)?;
    let grid_evals = rec.curve.len();
    let seeds = distinct_seeds(&trials, &grid_losses, spacing, if o.global { CANDIDATES } else { 1 });
    let step = [0.5 * spacing, 0.5 * spacing, 0.5 * spacing, 1.0];
    let mut best: Option<(Trial, f64)> = None;
    for s in &seeds {
        let r = rec.polish(&coarse_level, "coarse", s, &step, COARSE_EVALS, o.fit_rotation)?;
        if best.is_none_or(|b| r.1 < b.1) {
            best = Some(r);
        }
    }
    let coarse_evals = rec.curve.len() - grid_evals;
    let from = best.map_or(start_trial, |b| b.0);
    let fine = [0.1 * spacing, 0.1 * spacing, 0.1 * spacing, 0.25];
    let (t, loss) = rec.polish(&full_level, "full", &from, &fine, o.max_full_evaluations, o.fit_rotation)?;
    let full_evals = rec.curve.len() - grid_evals - coarse_evals;
    let lv = |pv: &PhaseVariance, evaluations| FitLevel { grid: pv.grid(), bf_pixels: pv.pixels(), evaluations };
    Ok(FitReport {
        aberrations: aberrations_of(&t),
        rotation_deg: t.rotation_deg,
        loss,
        evaluations: rec.curve.len(),
        levels: [lv(&grid_level, grid_evals), lv(&coarse_level, coarse_evals), lv(&full_level, full_evals)],
        grid_step_nm: spacing,
        threads,
        options: o.clone(),
        loss_curve: rec.curve,
    })
}

/// Grid candidates polished on the coarse level in a global fit.
pub const CANDIDATES: usize = 3;
/// Nelder–Mead evaluations per candidate on the coarse level.
pub const COARSE_EVALS: usize = 60;

/// The best `count` grid `trials` (by `losses`) that are not neighbours (within 1.5 grid
/// `spacing` in every aberration) of a better one: one seed per distinct basin.
pub fn distinct_seeds(trials: &[Trial], losses: &[f64], spacing: f64, count: usize) -> Vec<Trial> {
    let mut order: Vec<usize> = (0..trials.len().min(losses.len())).collect();
    order.sort_by(|&a, &b| losses[a].total_cmp(&losses[b]));
    let mut seeds: Vec<Trial> = Vec::new();
    for &i in &order {
        let t = trials[i];
        let near = |s: &Trial| (s.c10_nm - t.c10_nm).abs().max((s.c12a_nm - t.c12a_nm).abs()).max((s.c12b_nm - t.c12b_nm).abs()) <= 1.5 * spacing;
        if !seeds.iter().any(near) {
            seeds.push(t);
        }
        if seeds.len() == count {
            break;
        }
    }
    seeds
}
