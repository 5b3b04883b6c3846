//! Rocking curves on the Simulate page: the page's case (zone axis or Euler angles) at a sweep of
//! tilts about lab x or y, each tilt its own static case on the picked device, gathered by
//! `scatterlab_bloch::tilt_series::TiltSeries` onto the union of the tilts' beams (0 where a beam
//! is outside a tilt's |Sg| window) — what the npm package's `blochRocking` reports. The tilts run
//! one after another off the UI thread (desktop: a job thread; browser: one Worker request per
//! tilt), with progress after each and Cancel between tilts; a cancelled sweep keeps the tilts
//! done.

use std::sync::{Arc, Mutex};

use scatterlab_bloch::tilt_series::{TiltAxis, TiltSeries, TiltSweep};
use scatterlab_bloch::Crystal;
use scatterlab_core::CancelToken;

use super::crystal::CrystalState;
use super::simulate::{SimInputs, SimResult};
use crate::compute_job::{self, Job, JobPoll};
use crate::Device;

/// The sweep as the page sets it.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepInputs {
    /// Tilt axis (lab x or y).
    pub axis: TiltAxis,
    /// First and last offset (degrees) added to the page's tilt on that axis.
    pub from_deg: f64,
    /// Last offset (degrees).
    pub to_deg: f64,
    /// Number of tilts.
    pub n: usize,
}

impl Default for SweepInputs {
    fn default() -> Self {
        Self { axis: TiltAxis::X, from_deg: -1.0, to_deg: 1.0, n: 41 }
    }
}

/// A finished (or cancelled) sweep.
#[derive(Clone, Debug)]
pub struct RockingResult {
    /// The case id at zero offset.
    pub id: String,
    /// The gathered series.
    pub series: TiltSeries,
    /// The thicknesses (Å), the rows of every tilt.
    pub thicknesses: Vec<f64>,
    /// The device that ran the tilts.
    pub device: Device,
    /// Whether Cancel stopped it early.
    pub cancelled: bool,
    /// Wall time (s).
    pub seconds: f64,
}

/// Tilts done and total, shared with the running job.
pub type SweepProgress = Arc<Mutex<(usize, usize)>>;

/// The rocking part of the Simulate page.
#[derive(Default)]
pub struct RockingState {
    /// The sweep.
    pub sweep: SweepInputs,
    /// The last sweep.
    pub result: Option<RockingResult>,
    /// Why the last sweep failed.
    pub error: Option<String>,
    /// Beams whose curves are drawn (`None`: the strongest few at the thickness on display).
    pub picked: Vec<[i32; 3]>,
    /// The thickness on display (index into the result's thicknesses).
    pub thickness_index: usize,
    /// The text of the hkl box of the picker.
    pub pick_text: String,
    progress: SweepProgress,
    cancel: Option<CancelToken>,
    job: Option<Job<Result<RockingResult, String>>>,
}

impl RockingState {
    /// Starts the sweep of `inputs`' case for `crystal`'s crystal (`gpu`: the app's device, desktop).
    pub fn start(&mut self, inputs: &SimInputs, crystal: &CrystalState, gpu: Option<scatterlab_gpu::GpuContext>) -> Result<(), String> {
        let started = (|| {
            if self.job.is_some() {
                return Err("a rocking sweep is running".to_owned());
            }
            let s = &self.sweep;
            let sweep = TiltSweep::linspace(s.axis, s.from_deg, s.to_deg, s.n).map_err(|e| e.to_string())?;
            inputs.zone_case()?;
            let (p1, cif) = (crystal.crystal()?, crystal.current_cif()?);
            let cancel = CancelToken::new();
            *self.progress.lock().map_err(|_| "progress lock poisoned")? = (0, sweep.len());
            let (name, inputs, progress, token) = (crystal.name.clone(), inputs.clone(), self.progress.clone(), cancel.clone());
            self.job = Some(compute_job::spawn(egui::Context::default(), move || async move { run(name, cif, p1, inputs, sweep, gpu, progress, token).await }));
            self.cancel = Some(cancel);
            Ok(())
        })();
        if let Err(e) = &started {
            self.error = Some(e.clone());
        }
        started
    }

    /// Asks the sweep to stop after the tilt in progress.
    pub fn cancel(&self) {
        if let Some(c) = &self.cancel {
            c.cancel();
        }
    }

    /// Whether a sweep is running.
    pub fn is_running(&self) -> bool {
        self.job.is_some()
    }

    /// Tilts done and total of the running (or last) sweep.
    pub fn progress(&self) -> (usize, usize) {
        self.progress.lock().map(|p| *p).unwrap_or((0, 0))
    }

    /// Takes a finished sweep.
    pub fn poll(&mut self) {
        let Some(job) = &self.job else { return };
        let done = match job.poll() {
            JobPoll::Pending => return,
            JobPoll::Done(done) => done,
            JobPoll::Lost => Err("the rocking job stopped".to_owned()),
        };
        (self.job, self.cancel) = (None, None);
        match done {
            Ok(result) => {
                self.thickness_index = self.thickness_index.min(result.thicknesses.len().saturating_sub(1));
                (self.result, self.error) = (Some(result), None);
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The beams whose curves are drawn: the picked ones present in the series, else the
    /// `n` strongest (summed over tilts at the thickness on display).
    pub fn shown_beams(&self, n: usize) -> Vec<(usize, [i32; 3])> {
        let Some(r) = &self.result else { return Vec::new() };
        let hkl = r.series.hkl();
        let picked: Vec<(usize, [i32; 3])> = self.picked.iter().filter_map(|p| hkl.iter().position(|h| h == p).map(|j| (j, *p))).collect();
        if !picked.is_empty() {
            return picked;
        }
        let summed = r.series.summed();
        let Some(row) = summed.get(self.thickness_index) else { return Vec::new() };
        let mut order: Vec<usize> = (0..hkl.len()).collect();
        order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
        order.into_iter().take(n).map(|j| (j, hkl[j])).collect()
    }

    /// The page's part of the status JSON.
    pub fn status_json(&self) -> serde_json::Value {
        let (done, total) = self.progress();
        let result = self.result.as_ref().map(|r| {
            serde_json::json!({"id": r.id, "tilts": r.series.len(), "beams": r.series.n_beams(), "cancelled": r.cancelled, "seconds": r.seconds,
                "device": if r.device == Device::Gpu { "gpu" } else { "cpu" }})
        });
        serde_json::json!({"running": self.is_running(), "done": done, "total": total, "error": self.error, "result": result,
            "shown": self.shown_beams(6).iter().map(|(_, h)| *h).collect::<Vec<_>>()})
    }
}

/// One tilt on the picked device (desktop: here; browser: the Worker).
async fn one_tilt(name: &str, cif: &str, crystal: &Crystal, inputs: &SimInputs, gpu: Option<&scatterlab_gpu::GpuContext>) -> Result<SimResult, String> {
    #[cfg(target_arch = "wasm32")]
    {
        let _ = gpu;
        super::simulate_worker::run(name, cif, crystal, inputs).await
    }
    #[cfg(not(target_arch = "wasm32"))]
    match (inputs.device, gpu) {
        (Device::Cpu, _) => super::simulate_run::run_cpu(name, cif, crystal, inputs),
        (Device::Gpu, Some(gpu)) => super::simulate_run::run_gpu(name, cif, crystal, inputs, gpu).await,
        (Device::Gpu, None) => Err("device GPU: this app has no GPU device (pick CPU f64)".to_owned()),
    }
}

#[allow(clippy::too_many_arguments)]
async fn run(
    name: String,
    cif: String,
    crystal: Crystal,
    inputs: SimInputs,
    sweep: TiltSweep,
    gpu: Option<scatterlab_gpu::GpuContext>,
    progress: SweepProgress,
    cancel: CancelToken,
) -> Result<RockingResult, String> {
    let start = web_time::Instant::now();
    let thicknesses = super::simulate::parse_thicknesses(&inputs.thicknesses)?;
    let mut series = TiltSeries::new(thicknesses.len());
    let mut id = String::new();
    for (i, &offset) in sweep.angles_deg.iter().enumerate() {
        if cancel.is_cancelled() {
            break;
        }
        let tilt = sweep.tilt(inputs.tilt_deg, i).ok_or("tilt index out of the sweep")?;
        let at = SimInputs { tilt_deg: tilt, ..inputs.clone() };
        let r = one_tilt(&name, &cif, &crystal, &at, gpu.as_ref()).await.map_err(|e| format!("tilt {i} ({offset:+}°): {e}"))?;
        if id.is_empty() {
            id = r.id.clone();
        }
        series.push(offset, &r.hkl, &r.intensities).map_err(|e| e.to_string())?;
        if let Ok(mut p) = progress.lock() {
            p.0 = i + 1;
        }
    }
    if series.is_empty() {
        return Err("the sweep was cancelled before its first tilt".to_owned());
    }
    let cancelled = series.len() < sweep.len();
    Ok(RockingResult { id, series, thicknesses, device: inputs.device, cancelled, seconds: start.elapsed().as_secs_f64() })
}
