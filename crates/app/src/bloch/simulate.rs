//! The Simulate page's state and job: one static zone-axis case built by
//! `scatterlab_bloch::zone::case_from_zone` (what `scatterlab bloch simulate --cif … --kv …
//! --zone … --thickness …` builds) and run by `CaseInput::run_within` with the default limits and
//! diffBloch's conventions, so the numbers are the CLI's (or at Euler angles,
//! `scatterlab_bloch::euler::case_from_euler`). Every thickness comes from one run (the eigen
//! solver decomposes once for all of them), so the thickness slider only re-indexes. Where it
//! runs (desktop thread, desktop GPU, the browser's npm Worker): `simulate_run`.

use scatterlab_bloch::beams::Hkl;
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::zone::{ZoneCase, DEFAULT_G_MAX, DEFAULT_SG_MAX};

use super::crystal::CrystalState;
use crate::compute_job::{Job, JobPoll};
use crate::Device;

/// Most intensities the status JSON lists (beyond, it gives only the counts): the status is
/// rebuilt every frame, so it stays small.
pub const STATUS_MAX_VALUES: usize = 20_000;

/// The Simulate page's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct SimInputs {
    /// Accelerating voltage (kV).
    pub kv: f64,
    /// Zone axis `[uvw]`.
    pub zone: [i32; 3],
    /// Reference reflection (lab +x); `None`: the CLI's default choice.
    pub reference: Option<[i32; 3]>,
    /// Tilts about lab x then y (degrees).
    pub tilt_deg: [f64; 2],
    /// Thicknesses (Å), comma- or space-separated, as typed.
    pub thicknesses: String,
    /// Beam radius (Å⁻¹).
    pub g_max: f64,
    /// Excitation-error radius (Å⁻¹).
    pub sg_max: f64,
    /// Eigen (one decomposition for every thickness) or expm (one exponential per thickness).
    pub solver: Solver,
    /// Euler angles [φ, θ, ψ] (degrees, z–x′–z″) instead of the zone axis; `None`: the zone axis.
    pub euler_deg: Option<[f64; 3]>,
    /// CPU (f64) or GPU (f32, Taylor propagator); never substituted.
    pub device: Device,
}

impl Default for SimInputs {
    fn default() -> Self {
        Self {
            kv: 200.0,
            zone: [0, 0, 1],
            reference: None,
            tilt_deg: [0.0, 0.0],
            thicknesses: "100, 200, 300, 400, 500".to_owned(),
            g_max: DEFAULT_G_MAX,
            sg_max: DEFAULT_SG_MAX,
            solver: Solver::Eigen,
            euler_deg: None,
            device: Device::Cpu,
        }
    }
}

/// Parses a thickness list ("100, 200 300"); the error names the bad entry.
pub fn parse_thicknesses(text: &str) -> Result<Vec<f64>, String> {
    let values = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<f64>().map_err(|_| format!("thickness: {s:?} is not a number")))
        .collect::<Result<Vec<f64>, String>>()?;
    if values.is_empty() {
        return Err("thickness: give at least one thickness (Å)".to_owned());
    }
    Ok(values)
}

/// `n` evenly spaced thicknesses from `from` to `to` (Å), as the page's series helper writes them.
pub fn series(from: f64, to: f64, n: usize) -> String {
    let n = n.max(1);
    let step = if n > 1 { (to - from) / (n - 1) as f64 } else { 0.0 };
    (0..n).map(|i| format!("{}", from + step * i as f64)).collect::<Vec<_>>().join(", ")
}

impl SimInputs {
    /// The library's case description (the CLI's flags, as numbers).
    pub fn zone_case(&self) -> Result<ZoneCase, String> {
        Ok(ZoneCase {
            kv: self.kv,
            zone: self.zone,
            reference: self.reference,
            tilt_deg: self.tilt_deg,
            thicknesses_a: parse_thicknesses(&self.thicknesses)?,
            g_max: self.g_max,
            sg_max: self.sg_max,
            absorption: false,
        })
    }
}

/// A finished simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    /// The case id (`{crystal}-{kv}kV-[u,v,w]`).
    pub id: String,
    /// Beams, sorted by (h, k, l).
    pub hkl: Vec<Hkl>,
    /// The thicknesses (Å), the rows of `intensities`.
    pub thicknesses: Vec<f64>,
    /// `I[thickness][beam]`.
    pub intensities: Vec<Vec<f64>>,
    /// Lab-frame (g_x, g_y) of each beam (Å⁻¹), where its spot is drawn.
    pub g_xy: Vec<[f64; 2]>,
    /// The solver that ran.
    pub solver: Solver,
    /// The device that ran it.
    pub device: Device,
    /// Wall time (s).
    pub seconds: f64,
}

/// Runs the case of `inputs` for `crystal` (named `name`, from CIF `cif`) on the CPU, here.
pub fn run_case(name: &str, cif: &str, crystal: &scatterlab_bloch::Crystal, inputs: &SimInputs) -> Result<SimResult, String> {
    super::simulate_run::run_cpu(name, cif, crystal, inputs)
}

/// The intensity table as CSV: one row per beam, `h,k,l,gx_invA,gy_invA`, then one column per thickness.
pub fn intensity_csv(result: &SimResult) -> String {
    let mut out = String::from("h,k,l,gx_invA,gy_invA");
    for t in &result.thicknesses {
        out.push_str(&format!(",I_t{t}A"));
    }
    out.push('\n');
    for (j, (h, g)) in result.hkl.iter().zip(&result.g_xy).enumerate() {
        out.push_str(&format!("{},{},{},{},{}", h[0], h[1], h[2], g[0], g[1]));
        for row in &result.intensities {
            out.push_str(&format!(",{}", row.get(j).copied().unwrap_or(f64::NAN)));
        }
        out.push('\n');
    }
    out
}

/// The Simulate page.
pub struct SimulateState {
    /// The inputs.
    pub inputs: SimInputs,
    /// The last result.
    pub result: Option<SimResult>,
    /// Why the last run failed.
    pub error: Option<String>,
    /// The thickness on display (index into the result's thicknesses).
    pub thickness_index: usize,
    /// Spot areas ∝ log(1 + I/I_min) instead of I.
    pub log: bool,
    /// The thickness-series helper: from, to (Å), count.
    pub series: (f64, f64, usize),
    /// Where exports go on the desktop.
    pub export_dir: String,
    /// The last export's message.
    pub message: Option<Result<String, String>>,
    /// The app's GPU device (desktop), for the GPU choice.
    pub gpu: Option<scatterlab_gpu::GpuContext>,
    /// Rocking curves of the same case.
    pub rocking: super::rocking::RockingState,
    /// The central area shows the rocking curves instead of the pattern.
    pub show_rocking: bool,
    job: Option<Job<Result<SimResult, String>>>,
}

impl Default for SimulateState {
    fn default() -> Self {
        Self {
            inputs: SimInputs::default(),
            result: None,
            error: None,
            thickness_index: 0,
            log: false,
            series: (50.0, 1000.0, 20),
            export_dir: ".".to_owned(),
            message: None,
            gpu: None,
            rocking: Default::default(),
            show_rocking: false,
            job: None,
        }
    }
}

impl SimulateState {
    /// Starts the simulation of the current inputs for `crystal`'s crystal.
    pub fn start(&mut self, crystal: &CrystalState) -> Result<(), String> {
        let started = (|| {
            if self.job.is_some() {
                return Err("a simulation is running".to_owned());
            }
            let p1 = crystal.crystal()?;
            self.inputs.zone_case()?;
            if let Some(euler) = self.inputs.euler_deg {
                scatterlab_bloch::euler::euler_orientation(euler, self.inputs.tilt_deg).map_err(|e| e.to_string())?;
            }
            // The CIF as edited on the Crystal page (the worker and the GPU path read the text).
            let cif = crystal.current_cif()?;
            // The workspace repaints every frame while a job runs: no context needed here.
            let job = super::simulate_run::spawn(crystal.name.clone(), cif, p1, self.inputs.clone(), self.gpu.clone(), egui::Context::default());
            self.job = Some(job);
            Ok(())
        })();
        if let Err(e) = &started {
            self.error = Some(e.clone());
        }
        started
    }

    /// Whether a simulation or a rocking sweep is running.
    pub fn is_running(&self) -> bool {
        self.job.is_some() || self.rocking.is_running()
    }

    /// Takes a finished simulation.
    pub fn poll(&mut self) {
        self.rocking.poll();
        let Some(job) = &self.job else { return };
        match job.poll() {
            JobPoll::Done(Ok(result)) => {
                self.thickness_index = self.thickness_index.min(result.thicknesses.len().saturating_sub(1));
                (self.result, self.error, self.job) = (Some(result), None, None);
            }
            JobPoll::Done(Err(e)) => (self.error, self.job) = (Some(e), None),
            JobPoll::Pending => {}
            JobPoll::Lost => (self.error, self.job) = (Some("the simulation job stopped".to_owned()), None),
        }
    }

    /// The page's part of the status JSON.
    pub fn status_json(&self) -> serde_json::Value {
        let result = self.result.as_ref().map(|r| {
            let values = r.hkl.len() * r.thicknesses.len();
            serde_json::json!({
                "id": r.id, "solver": r.solver, "device": if r.device == Device::Gpu { "gpu" } else { "cpu" }, "beams": r.hkl.len(), "thicknesses": r.thicknesses,
                "hkl": (values <= STATUS_MAX_VALUES).then_some(&r.hkl),
                "I": (values <= STATUS_MAX_VALUES).then_some(&r.intensities),
                "seconds": r.seconds,
            })
        });
        serde_json::json!({"running": self.job.is_some(), "rocking": self.rocking.status_json(), "error": self.error, "thicknessIndex": self.thickness_index, "log": self.log, "result": result})
    }
}
