//! The protocol of `blochSimulate`, `blochSimulateCases`, `blochRocking` and `blochRefine`
//! (`web/src/generated/bloch.ts`).

use serde::Serialize;
use ts_rs::TS;

use super::{Float64Array, Int32Array};

/// The propagator: on the CPU `"expm"` (default, any case) or `"eigen"` (one decomposition for all thicknesses; no absorption); on the GPU `"taylor"` (f32, its only one).
#[derive(Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum BlochSolver {
    Eigen,
    Expm,
    Taylor,
}

/// Where a simulation runs: `"cpu"` (f64, the default) or `"gpu"` (f32 WGSL on the worker's WebGPU device; never substituted).
#[derive(Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum BlochDevice {
    Cpu,
    Gpu,
}

/// A tilt axis of the lab frame (inlined where used: `"x" | "y"`).
#[derive(Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Axis {
    X,
    Y,
}

/// What ran a simulation: its device, propagator and backend in words (`"cpu f64"`, or the adapter).
#[derive(Serialize, TS)]
pub struct BlochEngineInfo {
    /// The device that ran it.
    pub device: BlochDevice,
    /// The propagator that ran.
    pub solver: BlochSolver,
    /// `"cpu f64"`, or the GPU adapter and wgpu backend.
    pub backend: String,
}

/// Options of `Scatterlab.blochSimulate`. NaN, ∞, a wrong type or an unknown key rejects naming the option.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct BlochSimulateOptions {
    /// Accelerating voltage, kV.
    pub kv: f64,
    /// Zone axis [u, v, w] (integers; real-space direction along the beam, towards the gun).
    pub zone: [f64; 3],
    /// Crystal thicknesses, Å (at least one).
    #[ts(type = "ArrayLike<number>")]
    pub thicknesses: Vec<f64>,
    /// Beam radius |g| ≤ gMax, Å⁻¹ (default 1.6).
    pub g_max: Option<f64>,
    /// Excitation-error radius |Sg| ≤ sgMax, Å⁻¹ (default 0.04).
    pub sg_max: Option<f64>,
    /// Where it runs (default `"cpu"`, whatever the instance's device).
    pub device: Option<BlochDevice>,
    /// The propagator: the device's default (`"expm"` on the CPU, `"taylor"` on the GPU); one the device cannot run rejects.
    pub solver: Option<BlochSolver>,
    /// Tilts [tx, ty] in degrees about lab x then y (default [0, 0]).
    pub tilt: Option<[f64; 2]>,
    /// Reflection [h, k, l] whose direction (made perpendicular to the zone) is lab +x (default: the CLI's choice; only matters with `tilt`).
    pub reference: Option<[f64; 3]>,
    /// Absorptive structure factors (`"expm"` only).
    pub absorption: Option<bool>,
    /// The crystal's name in the case id (default `"crystal"`).
    pub name: Option<String>,
}

/// Result of `Scatterlab.blochSimulate` (its arrays transferred: yours to keep).
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BlochSimulation {
    /// Case id, `{name}-{kv}kV-[u,v,w]`.
    pub id: String,
    /// Beams (h, k, l), `nBeams` × 3 row-major, sorted by (h, k, l).
    pub hkl: Int32Array,
    /// Intensities (fractions of the incident beam), thickness-major: `intensities[t * nBeams + j]`.
    pub intensities: Float64Array,
    /// The thicknesses, Å (the rows of `intensities`).
    pub thicknesses: Float64Array,
    /// Lab-frame (g_x, g_y) of each beam, Å⁻¹, `nBeams` × 2 row-major: where its spot is drawn.
    #[serde(rename = "gXY")]
    pub g_xy: Float64Array,
    /// Number of beams.
    pub n_beams: f64,
    /// What ran it (in TypeScript the named `BlochEngineInfo & {…}`, see [`super::extending`]).
    #[serde(flatten)]
    #[ts(skip)]
    pub engine: BlochEngineInfo,
    /// Wall time, s.
    pub seconds: f64,
}

/// Options of `Scatterlab.blochSimulateCases`; every field is optional.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub struct BlochCasesOptions {
    /// Where the cases run (default `"cpu"`).
    pub device: Option<BlochDevice>,
    /// The propagator (the device's default: `"expm"` on the CPU, `"taylor"` on the GPU).
    pub solver: Option<BlochSolver>,
    /// The ids of the cases to run, in this order (default: every case of the file). An unknown id rejects naming it.
    pub ids: Option<Vec<String>>,
}

/// One case of `Scatterlab.blochSimulateCases` that ran (its arrays transferred).
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BlochCaseIntensities {
    /// The case id.
    pub id: String,
    /// Beams (h, k, l), `nBeams` × 3 row-major, sorted by (h, k, l) (rocking cases: the union over tilts).
    pub hkl: Int32Array,
    /// Intensities, thickness-major: `intensities[t * nBeams + j]`.
    pub intensities: Float64Array,
    /// The case's thicknesses, Å.
    pub thicknesses: Float64Array,
    /// Number of beams.
    pub n_beams: f64,
    /// What ran it (in TypeScript the named `BlochEngineInfo & {…}`, see [`super::extending`]).
    #[serde(flatten)]
    #[ts(skip)]
    pub engine: BlochEngineInfo,
    /// Absent: this case ran (tells it from a `BlochCaseError`).
    #[ts(optional, type = "undefined")]
    pub error: Option<()>,
}

/// One case of `Scatterlab.blochSimulateCases` that failed (the others still ran).
#[derive(Serialize, TS)]
pub struct BlochCaseError {
    /// The case id.
    pub id: String,
    /// Why it failed, naming the object at fault.
    pub error: String,
}

/// One case's answer: its intensities, or its error.
#[derive(Serialize, TS)]
#[serde(untagged)]
pub enum BlochCaseResult {
    Intensities(BlochCaseIntensities),
    Error(BlochCaseError),
}

/// The tilt offsets of `Scatterlab.blochRocking`, degrees, added to `tilt` on one axis (default `"x"`).
#[derive(Serialize, TS)]
#[serde(untagged)]
pub enum BlochTiltSweep {
    /// `n` evenly from `fromDeg` to `toDeg` (both included).
    #[serde(rename_all = "camelCase")]
    Range {
        #[ts(optional, inline)]
        axis: Option<Axis>,
        from_deg: f64,
        to_deg: f64,
        n: f64,
    },
    /// The listed angles.
    #[serde(rename_all = "camelCase")]
    List {
        #[ts(optional, inline)]
        axis: Option<Axis>,
        #[ts(type = "ArrayLike<number>")]
        angles_deg: Vec<f64>,
    },
}

/// Options of `Scatterlab.blochRocking`: `BlochSimulateOptions` and the sweep.
#[derive(Serialize, TS)]
pub struct BlochRockingOptions {
    /// The options of the static case (in TypeScript the named `BlochSimulateOptions & {…}`).
    #[serde(flatten)]
    #[ts(skip)]
    pub simulate: BlochSimulateOptions,
    /// The tilt offsets: `n` evenly from `fromDeg` to `toDeg` (both included), or the listed `anglesDeg`.
    pub tilts: BlochTiltSweep,
}

/// A progress report of `Scatterlab.blochRocking`, after every tilt.
#[derive(Serialize, TS)]
pub struct BlochRockingProgress {
    /// Tilts solved so far.
    pub done: f64,
    /// Tilts in the sweep.
    pub total: f64,
    /// Seconds since the call started.
    pub seconds: f64,
}

/// Result of `Scatterlab.blochRocking` (its arrays transferred).
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BlochRocking {
    /// Case id at zero offset, `{name}-{kv}kV-[u,v,w]`.
    pub id: String,
    /// The union of the tilts' beams (h, k, l), `nBeams` × 3 row-major, sorted by (h, k, l).
    pub hkl: Int32Array,
    /// Intensities `[tilt][thickness][beam]`: `intensities[(i * thicknesses.length + t) * nBeams + j]`; 0 where beam j is not in tilt i's set.
    pub intensities: Float64Array,
    /// The offsets solved, degrees (all of the sweep's unless cancelled).
    pub tilts: Float64Array,
    /// The thicknesses, Å.
    pub thicknesses: Float64Array,
    /// Number of beams in the union.
    pub n_beams: f64,
    /// Number of tilts solved.
    pub n_tilts: f64,
    /// The sweep's axis.
    #[ts(inline)]
    pub axis: Axis,
    /// What ran it (in TypeScript the named `BlochEngineInfo & {…}`, see [`super::extending`]).
    #[serde(flatten)]
    #[ts(skip)]
    pub engine: BlochEngineInfo,
    /// Whether an abort stopped the sweep early (the arrays then hold the tilts done).
    pub cancelled: bool,
    /// Wall time, s.
    pub seconds: f64,
}

/// Options of `Scatterlab.blochRefine`; every field is optional.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct BlochRefineOptions {
    /// `"lm"` (Levenberg–Marquardt, default), `"adam"` (diffBloch's optimiser and learning rate) or `"lbfgs"`.
    #[ts(optional, type = r#""lm" | "adam" | "lbfgs""#)]
    pub optimizer: Option<String>,
    /// Most iterations (epochs for `"adam"`); default 50, `"adam"`: the YAML's `refinement.steps`.
    pub max_iterations: Option<f64>,
    /// The experiment YAML's name among the files (default `"experiment.yaml"`, else the only YAML).
    pub experiment: Option<String>,
}

/// A progress report: after the start point is evaluated (iteration 0) and after every iteration.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BlochRefineProgress {
    /// Taken iterations (epochs) so far.
    pub iteration: f64,
    /// The iteration budget.
    pub max_iterations: f64,
    /// Model evaluations so far (each solves every frame).
    pub evaluations: f64,
    /// Mean per-frame wR2 now.
    #[serde(rename = "wR2")]
    pub w_r2: f64,
    /// The optimiser's cost now (Σ r² for `"lm"`).
    pub cost: f64,
    /// Seconds since the call started.
    pub seconds: f64,
}

pub use super::bloch_refine::{BlochRefineResult, BlochRefineResultJson};

/// The declarations of `web/src/generated/bloch.ts`, in order.
pub fn declarations(cfg: &ts_rs::Config) -> Vec<String> {
    use super::{declaration as d, extending};
    vec![
        d::<BlochSolver>(cfg),
        d::<BlochDevice>(cfg),
        d::<BlochEngineInfo>(cfg),
        d::<BlochSimulateOptions>(cfg),
        extending::<BlochEngineInfo, BlochSimulation>(cfg),
        d::<BlochCasesOptions>(cfg),
        extending::<BlochEngineInfo, BlochCaseIntensities>(cfg),
        d::<BlochCaseError>(cfg),
        d::<BlochCaseResult>(cfg),
        d::<BlochTiltSweep>(cfg),
        extending::<BlochSimulateOptions, BlochRockingOptions>(cfg),
        d::<BlochRockingProgress>(cfg),
        extending::<BlochEngineInfo, BlochRocking>(cfg),
        d::<BlochRefineOptions>(cfg),
        d::<BlochRefineProgress>(cfg),
        d::<BlochRefineResultJson>(cfg),
        d::<BlochRefineResult>(cfg),
    ]
}
