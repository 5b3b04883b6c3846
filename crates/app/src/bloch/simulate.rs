//! The Simulate page's state and job: one static zone-axis case built by
//! `scatterlab_bloch::zone::case_from_zone` (what `scatterlab bloch simulate --cif … --kv …
//! --zone … --thickness …` builds) and run by `CaseInput::run_within` with the default limits and
//! diffBloch's conventions, so the numbers are the CLI's. Every thickness comes from one run (the
//! eigen solver decomposes once for all of them), so the thickness slider only re-indexes.
//! Natively the case runs on a thread; in the browser inline (no threads in wasm).

use std::sync::mpsc;

use scatterlab_bloch::beams::{g_vector, lab_reciprocal_basis, Hkl};
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::zone::{case_from_zone, ZoneCase, DEFAULT_G_MAX, DEFAULT_SG_MAX};
use scatterlab_bloch::{Crystal, Limits};

use super::crystal::CrystalState;

/// Most intensities the status JSON lists (beyond, it gives only the counts): the status is
/// rebuilt every frame, so it stays small.
pub const STATUS_MAX_VALUES: usize = 20_000;

/// The Simulate page's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct SimInputs {
    /// Accelerating voltage (kV).
    pub kv: f64,
    /// Zone axis [uvw].
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
}

impl Default for SimInputs {
    fn default() -> Self {
        Self { kv: 200.0, zone: [0, 0, 1], reference: None, tilt_deg: [0.0, 0.0], thicknesses: "100, 200, 300, 400, 500".to_owned(), g_max: DEFAULT_G_MAX, sg_max: DEFAULT_SG_MAX, solver: Solver::Eigen }
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
        Ok(ZoneCase { kv: self.kv, zone: self.zone, reference: self.reference, tilt_deg: self.tilt_deg, thicknesses_a: parse_thicknesses(&self.thicknesses)?, g_max: self.g_max, sg_max: self.sg_max, absorption: false })
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
    /// I[thickness][beam].
    pub intensities: Vec<Vec<f64>>,
    /// Lab-frame (g_x, g_y) of each beam (Å⁻¹), where its spot is drawn.
    pub g_xy: Vec<[f64; 2]>,
    /// The solver that ran.
    pub solver: Solver,
    /// Wall time (s).
    pub seconds: f64,
}

/// Runs the case of `inputs` for `crystal` (named `name`, from CIF `cif`) on the CPU.
pub fn run_case(name: &str, cif: &str, crystal: &Crystal, inputs: &SimInputs) -> Result<SimResult, String> {
    let start = web_time::Instant::now();
    let zone = inputs.zone_case()?;
    let file = case_from_zone(name, cif, crystal, &zone).map_err(|e| e.to_string())?;
    let case = file.cases.first().ok_or("no case built")?;
    let method = Method { solver: inputs.solver, conventions: Conventions::DiffBloch };
    let (hkl, intensities) = case.run_within(crystal, method, &Limits::default()).map_err(|e| e.to_string())?;
    let basis = lab_reciprocal_basis(&crystal.cell.direct_matrix(), &case.orientation).map_err(|e| e.to_string())?;
    let g_xy = hkl.iter().map(|&h| g_vector(h, &basis)).map(|g| [g[0], g[1]]).collect();
    Ok(SimResult { id: case.id.clone(), hkl, thicknesses: case.thicknesses_a.clone(), intensities, g_xy, solver: inputs.solver, seconds: start.elapsed().as_secs_f64() })
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
    job: Option<mpsc::Receiver<Result<SimResult, String>>>,
}

impl Default for SimulateState {
    fn default() -> Self {
        Self { inputs: SimInputs::default(), result: None, error: None, thickness_index: 0, log: false, series: (50.0, 1000.0, 20), export_dir: ".".to_owned(), message: None, job: None }
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
            let (name, cif, inputs) = (crystal.name.clone(), crystal.text.clone(), self.inputs.clone());
            let (tx, rx) = mpsc::channel();
            #[cfg(not(target_arch = "wasm32"))]
            std::thread::spawn(move || {
                let _ = tx.send(run_case(&name, &cif, &p1, &inputs));
            });
            #[cfg(target_arch = "wasm32")]
            let _ = tx.send(run_case(&name, &cif, &p1, &inputs));
            self.job = Some(rx);
            Ok(())
        })();
        if let Err(e) = &started {
            self.error = Some(e.clone());
        }
        started
    }

    /// Whether a simulation is running.
    pub fn is_running(&self) -> bool {
        self.job.is_some()
    }

    /// Takes a finished simulation.
    pub fn poll(&mut self) {
        let Some(rx) = &self.job else { return };
        match rx.try_recv() {
            Ok(Ok(result)) => {
                self.thickness_index = self.thickness_index.min(result.thicknesses.len().saturating_sub(1));
                (self.result, self.error, self.job) = (Some(result), None, None);
            }
            Ok(Err(e)) => (self.error, self.job) = (Some(e), None),
            Err(mpsc::TryRecvError::Empty) => {}
            Err(mpsc::TryRecvError::Disconnected) => (self.error, self.job) = (Some("the simulation thread stopped".to_owned()), None),
        }
    }

    /// The page's part of the status JSON.
    pub fn status_json(&self) -> serde_json::Value {
        let result = self.result.as_ref().map(|r| {
            let values = r.hkl.len() * r.thicknesses.len();
            serde_json::json!({
                "id": r.id, "solver": r.solver, "device": "cpu", "beams": r.hkl.len(), "thicknesses": r.thicknesses,
                "hkl": (values <= STATUS_MAX_VALUES).then_some(&r.hkl),
                "I": (values <= STATUS_MAX_VALUES).then_some(&r.intensities),
                "seconds": r.seconds,
            })
        });
        serde_json::json!({"running": self.is_running(), "error": self.error, "thicknessIndex": self.thickness_index, "log": self.log, "result": result})
    }
}
