//! `experiment.yaml`: a diffBloch 0.2.0rc1 experiment configuration read as diffBloch's pydantic
//! schema (`config/schema.py`) reads it — the same keys, the same defaults, the same validation —
//! so a YAML diffBloch accepts is accepted here and a key diffBloch rejects (its `extra="forbid"`)
//! is an error naming its dotted path.
//!
//! Every key of diffBloch's schema is parsed, not only those the synthetic fixture uses: a valid
//! diffBloch YAML must not be reported as "unknown" here. Settings whose behaviour this crate does
//! not reproduce yet (mosaicity, pooled datasets, the train/validation split, …) are parsed and then
//! refused by [`ExperimentConfig::check_supported`] with a [`RefineError::Unsupported`] naming the
//! key, rather than silently ignored.
//!
//! YAML is read with `yaml-rust2` (pure Rust, maintained, already in the workspace for the ORSO
//! reader) into a tree we walk ourselves: walking the tree is what lets every error carry the full
//! key path, which serde's `deny_unknown_fields` would report without its parents.

use std::collections::BTreeMap;

use super::RefineError;

mod parse;

/// diffBloch's propagation method (`core/solver.py::SolverMethod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverMethod {
    /// `matrix_exp`: a matrix exponential per thickness (any matrix; diffBloch's default).
    MatrixExp,
    /// `bloch_eigen`: one Hermitian eigendecomposition per orientation (non-absorptive only).
    BlochEigen,
}

/// How a rocking curve's tilts are coupled (`blochwave.coupling_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CouplingMode {
    /// Tilt chunks each solved on the union of the excited beams at the chunk's boundary tilts.
    Union,
    /// Every tilt solved on its own excited beam set.
    PerTilt,
}

/// The residual driving preprocessing and refinement (`loss_metrics.residual`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residual {
    /// Scale-optimised weighted R2 of Klar et al. (2023).
    Wr2,
    /// Scale-optimised Bragg R(obs).
    Robs,
}

/// A whole-group trainable selection (`refinement.trainable.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Every atom.
    All,
    /// No atom.
    None,
}

/// The optimizer backend named by `refinement.optimizer.name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptimizerName {
    /// L-BFGS.
    Lbfgs,
    /// Adam.
    Adam,
    /// AdamW.
    Adamw,
}

/// Fitting-stage order when both preprocessing fits are on (`preprocess.stage_order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageOrder {
    /// Thickness, then orientation (diffBloch's default).
    ThicknessFirst,
    /// Orientation, then thickness.
    OrientationFirst,
}

/// `inputs`: the files of the experiment, relative to its directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    /// The start structure (CIF).
    pub structure: String,
    /// The PETS2 `.cif_pets` file(s): one unless `multi_dataset`.
    pub exp_data: Vec<String>,
    /// Pool several datasets into one experiment.
    pub multi_dataset: bool,
    /// Keep hydrogen sites (diffBloch drops them by default).
    pub load_hydrogens: bool,
    /// Force every site onto U_iso.
    pub isotropic_displacements_only: bool,
}

/// `sample`: fixed sample properties.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Seed thicknesses (Å), each finite and positive.
    pub thicknesses: Vec<f64>,
    /// Per-dataset mean thickness (pooled experiments only).
    pub mean_thickness_by_dataset: BTreeMap<String, f64>,
}

/// `blochwave`: beam selection, coupling and solver.
#[derive(Debug, Clone, PartialEq)]
pub struct Blochwave {
    /// Propagation method.
    pub solver: SolverMethod,
    /// Absorptive structure factors.
    pub absorption: bool,
    /// Klar relative excitation-error cut-off: keep when |Sg|/sg_lever < rsg.
    pub rsg: f64,
    /// Klar absolute margin: keep when sg_lever − |Sg| > dsg (Å⁻¹).
    pub dsg: f64,
    /// Number of rocking-curve tilts.
    pub rocking_curve_sampling: usize,
    /// PETS-derived mosaic smoothing of the rocking curve.
    pub mosaicity: bool,
    /// Chunks of the fixed (non-adaptive) union coupling.
    pub fixed_n_segments: usize,
    /// Union or per-tilt coupling.
    pub coupling_mode: CouplingMode,
    /// Coupling radius (Å⁻¹): a beam couples when |g| < g_max; also the scored-set and seed radius.
    pub g_max: f64,
    /// Excitation-error cut-off of the coupling (Å⁻¹): |Sg| < sg_max.
    pub sg_max: f64,
    /// Adaptive (recursive-bisection) chunk boundaries.
    pub union_adaptive: bool,
    /// Adaptive split threshold: split while a midpoint adds more than this fraction of new beams.
    pub union_max_new_beams_pct: f64,
    /// Zero-based PETS rotations excluded from the experiment.
    pub ignore_orientations: Vec<usize>,
}

/// `preprocess.orientation.nelder_mead`: bounds of diffBloch's orientation search.
#[derive(Debug, Clone, PartialEq)]
pub struct NelderMead {
    /// Initial simplex edge (degrees).
    pub step_size: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Convergence tolerance on the angles (degrees).
    pub x_tolerance: f64,
    /// Convergence tolerance on wR2.
    pub f_tolerance: f64,
    /// Divide each trial's wR2 by its matched-reflection count.
    pub penalize_fewer_reflections: bool,
}

/// `preprocess.thickness`: the per-rotation thickness grid search.
#[derive(Debug, Clone, PartialEq)]
pub struct ThicknessGrid {
    /// Smallest candidate (Å).
    pub min_thickness: f64,
    /// Largest candidate (Å).
    pub max_thickness: f64,
    /// Number of evenly spaced candidates.
    pub n_steps: usize,
    /// Plot wR2 against thickness (reporting only).
    pub plot: bool,
}

/// `preprocess`: the calibration stages before refinement.
#[derive(Debug, Clone, PartialEq)]
pub struct Preprocess {
    /// Fit each rotation's orientation (diffBloch default: on).
    pub optimize_orientation: bool,
    /// Fit each rotation's thickness (diffBloch default: on).
    pub optimize_thickness: bool,
    /// Order of the two fits.
    pub stage_order: StageOrder,
    /// Orientation-search bounds.
    pub nelder_mead: NelderMead,
    /// Thickness grid.
    pub thickness: ThicknessGrid,
}

/// `refinement.trainable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trainable {
    /// Atomic positions.
    pub positions: Selection,
    /// Displacement parameters.
    pub adp: Selection,
    /// Occupancies.
    pub occupancy: Selection,
}

/// `refinement.split`: train/validation split of the rotations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    /// Hold out every round(1/val_frac)-th rotation.
    pub train_test: bool,
    /// Held-out fraction, in (0, 1).
    pub val_frac: f64,
}

/// `refinement.thickness_nn`: diffBloch's apparent-thickness network.
#[derive(Debug, Clone, PartialEq)]
pub struct ThicknessNn {
    /// Whether the network drives per-rotation thickness (diffBloch default: on).
    pub enabled: bool,
    /// Samples per evaluation.
    pub num_samples: usize,
    /// Sample thickness stochastically.
    pub sample_thickness: bool,
    /// Network form (only `min_thickness` exists).
    pub form: String,
    /// Lower bound (Å).
    pub min_thickness: f64,
    /// Upper bound (Å).
    pub max_thickness: f64,
    /// Initialisation seed.
    pub init_seed: i64,
}

/// `refinement`: the default single-stage refinement.
#[derive(Debug, Clone, PartialEq)]
pub struct Refinement {
    /// Optimizer steps (epochs).
    pub steps: usize,
    /// Trainable groups.
    pub trainable: Trainable,
    /// Optimizer backend.
    pub optimizer: OptimizerName,
    /// Learning rate.
    pub lr: f64,
    /// Train/validation split.
    pub split: Split,
    /// Apparent-thickness network.
    pub thickness_nn: ThicknessNn,
}

/// A parsed `experiment.yaml` with diffBloch's defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentConfig {
    /// `name`.
    pub name: String,
    /// `inputs`.
    pub inputs: Inputs,
    /// `sample`.
    pub sample: Sample,
    /// `blochwave`.
    pub blochwave: Blochwave,
    /// `preprocess`.
    pub preprocess: Preprocess,
    /// `loss_metrics.residual`.
    pub residual: Residual,
    /// `refinement`.
    pub refinement: Refinement,
}
