//! Bloch-wave structure refinement against 3D ED data, as diffBloch 0.2.0rc1 sets it up: a
//! diffBloch experiment directory (`experiment.yaml`, a PETS2 `.cif_pets`, the start CIF) read as
//! diffBloch reads it ([`experiment`], [`pets`]), its geometry recipe — virtual frames, rocking
//! tilts, coupled beam sets, the scored reflections ([`frames`]) — solved by the crate's own
//! forward model ([`crate::frame::Frame`]), and diffBloch's per-frame wR2 / R_obs ([`metric`]).

pub mod device;
pub mod experiment;
pub mod first_order;
pub mod frames;
mod linalg;
pub mod lm;
pub mod metric;
pub mod outcome;
pub mod output;
pub mod pets;
pub mod problem;
mod yaml;

use std::path::{Path, PathBuf};

use num_complex::Complex64;

use crate::crystal::{parse_cif_asymmetric, AsymmetricUnit, Crystal};
use crate::frame::SupportTable;
use crate::matrix::StructureFactorTable;
use crate::structure_factor::StructureFactors;
use crate::BlochError;

pub use device::ModelDevice;
pub use experiment::ExperimentConfig;
pub use frames::{GeometryPlan, PlannedFrame};
pub use lm::{LmOptions, Optimizer, Refiner, StepReport, StopReason};
pub use metric::FrameMetrics;
pub use output::{observed_vs_calculated_csv, refined_cif, SiteUncertainty};
pub use pets::PetsData;
pub use problem::Problem;

/// Relative cell difference (any parameter) above which the CIF and PETS cells are refused, as
/// diffBloch refuses them; above [`CELL_WARN_RTOL`] it only warns.
pub const CELL_FAIL_RTOL: f64 = 0.05;
/// Relative cell difference above which a warning is recorded.
pub const CELL_WARN_RTOL: f64 = 0.01;
/// Largest relative change of the PETS metric tensor under a CIF symmetry operator: above it the
/// CIF's space group contradicts the data cell (a 4-fold axis on a 120° cell, …).
pub const SYMMETRY_METRIC_RTOL: f64 = 0.05;

/// An error of the refinement inputs or of the model, naming the item concerned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RefineError {
    /// A file could not be read.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// An `experiment.yaml` key that is unknown, missing, mistyped or out of range.
    #[error("{file}: {key}: {message}")]
    Yaml {
        /// The YAML file.
        file: String,
        /// Dotted key path (e.g. `blochwave.g_max`), or the line for a syntax error.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A malformed or inconsistent `.cif_pets` file.
    #[error("{file}: line {line}: {message}")]
    Pets {
        /// The PETS file.
        file: String,
        /// 1-based line (0 when the problem is an absent item).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The structure CIF could not be read.
    #[error("{file}: {source}")]
    Structure {
        /// The CIF file.
        file: String,
        /// The crystal reader's error (it names the line and tag).
        source: BlochError,
    },
    /// Inputs that contradict each other (cells, symmetry, frames).
    #[error("{item}: {message}")]
    Inconsistent {
        /// What disagrees.
        item: String,
        /// How.
        message: String,
    },
    /// A diffBloch setting this crate does not reproduce yet.
    #[error("{key}: not supported: {message}")]
    Unsupported {
        /// The YAML key.
        key: String,
        /// Why.
        message: String,
    },
    /// The forward model failed.
    #[error(transparent)]
    Bloch(#[from] BlochError),
    /// The caller cancelled the refinement.
    #[error("refinement cancelled")]
    Cancelled,
}

impl From<scatterlab_core::InputError> for RefineError {
    fn from(e: scatterlab_core::InputError) -> Self {
        RefineError::Bloch(e.into())
    }
}

fn read_text(path: &Path) -> Result<String, RefineError> {
    std::fs::read_to_string(path).map_err(|e| RefineError::Io { path: path.display().to_string(), message: e.to_string() })
}

/// A loaded diffBloch experiment: configuration, PETS data, start structure and the geometry
/// plan frozen at the start structure.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// The experiment directory.
    pub dir: PathBuf,
    /// `experiment.yaml`.
    pub config: ExperimentConfig,
    /// The PETS data.
    pub pets: PetsData,
    /// The start structure (asymmetric unit in the PETS cell).
    pub start: AsymmetricUnit,
    /// The start CIF's text (the refined CIF keeps its symmetry block).
    pub start_cif: String,
    /// Frames, tilts, beam sets and scored reflections.
    pub plan: GeometryPlan,
    /// Non-fatal findings (e.g. a CIF cell 1–5 % off the PETS cell).
    pub warnings: Vec<String>,
}

/// Calculated against observed intensities of one frame, with its metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameFit {
    /// PETS frame id.
    pub id: i64,
    /// The scored reflections' hkl.
    pub hkl: Vec<[i32; 3]>,
    /// Observed intensities.
    pub observed: Vec<f64>,
    /// Their σ.
    pub sigmas: Vec<f64>,
    /// Calculated intensities (fractions of the incident beam summed over tilts), first thickness.
    pub calculated: Vec<f64>,
    /// wR2 and R_obs at their optimal scales.
    pub metrics: FrameMetrics,
}

/// The agreement of one structure with the whole experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Per frame, in plan order.
    pub frames: Vec<FrameFit>,
    /// Mean per-frame wR2.
    pub wr2: f64,
    /// Mean per-frame R_obs.
    pub r_obs: f64,
}

impl Experiment {
    /// Loads an experiment from its directory or from its `experiment.yaml`; only the files the
    /// YAML names are read.
    pub fn load(path: &Path) -> Result<Self, RefineError> {
        let (dir, yaml) =
            if path.is_dir() { (path.to_path_buf(), path.join("experiment.yaml")) } else { (path.parent().unwrap_or(Path::new(".")).to_path_buf(), path.to_path_buf()) };
        let yaml_text = read_text(&yaml)?;
        let mut experiment =
            Self::from_texts(&yaml.display().to_string(), &yaml_text, &mut |name| read_text(&dir.join(name)).map(|text| (dir.join(name).display().to_string(), text)))?;
        experiment.dir = dir;
        Ok(experiment)
    }

    /// Builds an experiment from the YAML text and a reader of the files it names (`read(name)`
    /// → (display name, text)): a browser's picked or dropped files, a Worker's, Python's.
    /// `yaml_name` names the YAML in errors. [`Experiment::dir`] is left empty.
    pub fn from_texts(yaml_name: &str, yaml_text: &str, read: &mut dyn FnMut(&str) -> Result<(String, String), RefineError>) -> Result<Self, RefineError> {
        let config = ExperimentConfig::parse(yaml_name, yaml_text)?;
        config.check_supported()?;
        let pets_name = config.inputs.exp_data.first().ok_or_else(|| RefineError::Yaml {
            file: yaml_name.to_owned(),
            key: "inputs.exp_data".to_owned(),
            message: "names no file".to_owned(),
        })?;
        let (pets_file, pets_text) = read(pets_name)?;
        let pets = PetsData::parse(&pets_file, &pets_text)?;
        let mut warnings = Vec::new();
        let (cif_file, cif_text) = read(&config.inputs.structure)?;
        let start = Self::structure_from_text(&config, &pets, &cif_file, &cif_text, &mut warnings)?;
        let f000 = f000(&start, config.blochwave.absorption, &pets)?;
        let plan = GeometryPlan::build(&config, &pets, f000)?;
        Ok(Self { dir: PathBuf::new(), config, pets, start, start_cif: cif_text, plan, warnings })
    }

    /// Reads another structure (e.g. a true or refined model) as the start one is read: its
    /// cell checked against and replaced by the PETS cell, hydrogens dropped unless the YAML
    /// keeps them, its symmetry checked against the PETS metric.
    pub fn read_structure(&self, cif: &Path) -> Result<AsymmetricUnit, RefineError> {
        self.structure(&cif.display().to_string(), &read_text(cif)?)
    }

    /// [`Experiment::read_structure`] of CIF text (`file` names it in errors).
    pub fn structure(&self, file: &str, cif_text: &str) -> Result<AsymmetricUnit, RefineError> {
        Self::structure_from_text(&self.config, &self.pets, file, cif_text, &mut Vec::new())
    }

    fn structure_from_text(config: &ExperimentConfig, pets: &PetsData, file: &str, cif_text: &str, warnings: &mut Vec<String>) -> Result<AsymmetricUnit, RefineError> {
        let file = file.to_owned();
        let mut asu = parse_cif_asymmetric("", cif_text).map_err(|source| RefineError::Structure { file: file.clone(), source })?;
        let names = ["a", "b", "c", "alpha", "beta", "gamma"];
        let cif_cell = [asu.cell.lengths[0], asu.cell.lengths[1], asu.cell.lengths[2], asu.cell.angles_deg[0], asu.cell.angles_deg[1], asu.cell.angles_deg[2]];
        for ((name, &ours), &theirs) in names.iter().zip(&cif_cell).zip(&pets.cell) {
            let relative = (ours - theirs).abs() / theirs.abs();
            if relative > CELL_FAIL_RTOL {
                return Err(RefineError::Inconsistent {
                    item: format!("{file}: cell {name}"),
                    message: format!("{ours} differs from the PETS cell's {theirs} ({} by {:.2} %) by more than 5 %", pets.file, 100.0 * relative),
                });
            }
            if relative > CELL_WARN_RTOL {
                warnings.push(format!("{file}: cell {name} {ours} differs from the PETS cell's {theirs} by {:.2} %; the PETS cell is used", 100.0 * relative));
            }
        }
        asu.cell = crate::crystal::Cell { lengths: [pets.cell[0], pets.cell[1], pets.cell[2]], angles_deg: [pets.cell[3], pets.cell[4], pets.cell[5]] };
        check_symmetry(&asu, &file)?;
        if !config.inputs.load_hydrogens {
            // diffBloch drops hydrogen sites unless `inputs.load_hydrogens`.
            asu.sites.retain(|site| site.z != 1);
        }
        if asu.sites.is_empty() {
            return Err(RefineError::Inconsistent { item: file, message: "no atom sites (after dropping hydrogens)".to_owned() });
        }
        Ok(asu)
    }

    /// Solves every frame for structure `asu` (in the PETS cell, e.g. from
    /// [`Experiment::read_structure`]) and scores it with diffBloch's metrics.
    pub fn evaluate(&self, asu: &AsymmetricUnit) -> Result<Evaluation, RefineError> {
        let (crystal, _) = asu.expand();
        let table = Table::compute(&crystal, &self.plan)?;
        let mut frames = Vec::with_capacity(self.plan.frames.len());
        for (i, planned) in self.plan.frames.iter().enumerate() {
            let frame = self.plan.frame(i).ok_or_else(|| RefineError::Inconsistent { item: format!("frame {i}"), message: "out of range".to_owned() })?;
            let pattern = frame.run(table.as_table(), &self.plan.optics, self.plan.method)?;
            let intensities = pattern.intensities.first().ok_or_else(|| RefineError::Inconsistent { item: format!("frame {}", planned.id), message: "no thickness".to_owned() })?;
            let calculated = planned
                .scored
                .iter()
                .map(|s| {
                    pattern
                        .hkl
                        .binary_search(&s.hkl)
                        .map(|j| intensities[j])
                        .map_err(|_| RefineError::Inconsistent { item: format!("frame {}: reflection {:?}", planned.id, s.hkl), message: "scored but not solved".to_owned() })
                })
                .collect::<Result<Vec<f64>, _>>()?;
            let observed: Vec<f64> = planned.scored.iter().map(|s| s.intensity).collect();
            let sigmas: Vec<f64> = planned.scored.iter().map(|s| s.sigma).collect();
            let metrics = metric::frame_metrics(&calculated, &observed, &sigmas);
            frames.push(FrameFit { id: planned.id, hkl: planned.scored.iter().map(|s| s.hkl).collect(), observed, sigmas, calculated, metrics });
        }
        let wr2 = metric::finite_mean(frames.iter().map(|f| f.metrics.wr2.value));
        let r_obs = metric::finite_mean(frames.iter().map(|f| f.metrics.r_obs.value));
        Ok(Evaluation { frames, wr2, r_obs })
    }
}

/// Every operator must keep the PETS metric G (Rᵀ G R = G): a space group that does not fit the
/// data cell is refused, naming the operator.
fn check_symmetry(asu: &AsymmetricUnit, file: &str) -> Result<(), RefineError> {
    let direct = asu.cell.direct_matrix();
    // G_ij = a_i · a_j (rows of the direct matrix).
    let g: [[f64; 3]; 3] = std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| direct[i][k] * direct[j][k]).sum()));
    let scale = g.iter().flatten().fold(0.0_f64, |m, v| m.max(v.abs()));
    for (n, op) in asu.ops.iter().enumerate() {
        let r = op.rotation;
        // x' = R x, so the metric seen by x is Rᵀ G R.
        let worst = (0..3)
            .flat_map(|i| (0..3).map(move |j| (i, j)))
            .map(|(i, j)| {
                let rgr: f64 = (0..3).map(|k| (0..3).map(|l| r[k][i] * g[k][l] * r[l][j]).sum::<f64>()).sum();
                (rgr - g[i][j]).abs()
            })
            .fold(0.0_f64, f64::max);
        if worst > SYMMETRY_METRIC_RTOL * scale {
            return Err(RefineError::Inconsistent {
                item: format!("{file}: symmetry operator {} ({n} of {})", n + 1, asu.ops.len()),
                message: format!(
                    "does not preserve the PETS cell's metric (off by {:.1} % of its largest entry): the space group contradicts the data cell",
                    100.0 * worst / scale
                ),
            });
        }
    }
    Ok(())
}

/// F(000) (Å⁻²) of `asu` in the PETS cell: elastic, or with diffBloch's absorptive part.
fn f000(asu: &AsymmetricUnit, absorption: bool, pets: &PetsData) -> Result<Complex64, RefineError> {
    let (crystal, _) = asu.expand();
    if absorption {
        let energy = frames::snap_energy_ev(frames::wavelength_to_energy_ev(pets.wavelength_a));
        Ok(StructureFactors::compute(&crystal, 0.0, energy, true)?.f000())
    } else {
        Ok(SupportTable::compute(&crystal, &[[0, 0, 0]])?.f000())
    }
}

/// Structure factors for every frame of a plan: on the frames' support when elastic, on the full
/// grid when absorptive (the support table has no absorptive part).
enum Table {
    Support(SupportTable),
    Grid(StructureFactors),
}

impl Table {
    fn compute(crystal: &Crystal, plan: &GeometryPlan) -> Result<Self, RefineError> {
        if plan.absorption {
            return Ok(Table::Grid(StructureFactors::compute(crystal, plan.grid_g_max_inv_a, plan.energy_ev, true)?));
        }
        let mut support: Vec<[i32; 3]> = (0..plan.frames.len()).filter_map(|i| plan.frame(i)).flat_map(|f| f.support()).collect();
        support.sort_unstable();
        support.dedup();
        Ok(Table::Support(SupportTable::compute(crystal, &support)?))
    }

    fn as_table(&self) -> &dyn StructureFactorTable {
        match self {
            Table::Support(t) => t,
            Table::Grid(t) => t,
        }
    }
}
