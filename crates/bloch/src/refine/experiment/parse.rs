//! The `experiment.yaml` walker: each section read key by key with diffBloch's defaults and
//! validation, every error naming its dotted key path.

use std::collections::BTreeMap;

use yaml_rust2::{Yaml, YamlLoader};

use super::super::yaml::{as_f64, kind, positive, relative_path, Node};
use super::*;

impl ExperimentConfig {
    /// Parses the text of an `experiment.yaml`; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, RefineError> {
        let docs = YamlLoader::load_from_str(text).map_err(|e| RefineError::Yaml {
            file: file.to_owned(),
            key: format!("line {}", e.marker().line()),
            message: format!("not valid YAML: {e}"),
        })?;
        let [doc] = docs.as_slice() else {
            return Err(RefineError::Yaml { file: file.to_owned(), key: "(document)".to_owned(), message: format!("must hold exactly one YAML document (found {})", docs.len()) });
        };
        let mut root = Node::new(file, String::new(), doc)?;
        let name = root.required_string("name")?;
        let inputs = Self::inputs(&mut root)?;
        let sample = Self::sample(&mut root)?;
        let blochwave = Self::blochwave(&mut root)?;
        let preprocess = Self::preprocess(&mut root)?;
        let residual = match root.child("loss_metrics")? {
            None => Residual::Wr2,
            Some(mut node) => {
                let r = node.choice("residual", &[("wr2", Residual::Wr2), ("robs", Residual::Robs)], Residual::Wr2)?;
                node.finish()?;
                r
            }
        };
        let refinement = Self::refinement(&mut root)?;
        root.finish()?;
        let config = Self { name, inputs, sample, blochwave, preprocess, residual, refinement };
        config.cross_checks(file)?;
        Ok(config)
    }

    fn inputs(root: &mut Node<'_>) -> Result<Inputs, RefineError> {
        let Some(mut node) = root.child("inputs")? else { return Err(root.error("inputs", "is required")) };
        let structure = node.required_string("structure")?;
        let structure = relative_path(&node, "structure", structure)?;
        let exp_data = match node.take("exp_data") {
            None => return Err(node.error("exp_data", "is required")),
            Some(Yaml::String(s)) => vec![relative_path(&node, "exp_data", s.clone())?],
            Some(Yaml::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let key = format!("exp_data[{i}]");
                    match item {
                        Yaml::String(s) => out.push(relative_path(&node, &key, s.clone())?),
                        other => return Err(node.error(&key, format!("must be a string (got {})", kind(other)))),
                    }
                }
                out
            }
            Some(other) => return Err(node.error("exp_data", format!("must be a path or a list of paths (got {})", kind(other)))),
        };
        let is_list = !matches!(node.entries.iter().find(|(k, _)| k == "exp_data").map(|(_, y)| *y), Some(Yaml::String(_)));
        let multi_dataset = node.bool_or("multi_dataset", false)?;
        if multi_dataset && exp_data.len() < 2 {
            return Err(node.error("multi_dataset", "true requires inputs.exp_data to be a list of 2+ paths"));
        }
        if !multi_dataset && is_list {
            return Err(node.error("exp_data", "is a list but inputs.multi_dataset is false"));
        }
        let load_hydrogens = node.bool_or("load_hydrogens", false)?;
        let isotropic_displacements_only = node.bool_or("isotropic_displacements_only", false)?;
        node.finish()?;
        Ok(Inputs { structure, exp_data, multi_dataset, load_hydrogens, isotropic_displacements_only })
    }

    fn sample(root: &mut Node<'_>) -> Result<Sample, RefineError> {
        let Some(mut node) = root.child("sample")? else {
            return Ok(Sample { thicknesses: vec![820.0], mean_thickness_by_dataset: BTreeMap::new() });
        };
        let thicknesses = node.f64_list_or("thicknesses", &[820.0])?;
        if thicknesses.is_empty() {
            return Err(node.error("thicknesses", "must contain at least one value"));
        }
        for (i, &t) in thicknesses.iter().enumerate() {
            positive(&node, &format!("thicknesses[{i}]"), t)?;
        }
        let mut mean_thickness_by_dataset = BTreeMap::new();
        if let Some(map) = node.child("mean_thickness_by_dataset")? {
            let entries = map.entries.clone();
            for (key, value) in entries {
                let t = as_f64(value).ok_or_else(|| map.error(&key, format!("must be a number (got {})", kind(value))))?;
                let key = relative_path(&map, &key, key.clone())?;
                mean_thickness_by_dataset.insert(key.clone(), positive(&map, &key, t)?);
            }
        }
        node.finish()?;
        Ok(Sample { thicknesses, mean_thickness_by_dataset })
    }

    fn blochwave(root: &mut Node<'_>) -> Result<Blochwave, RefineError> {
        let empty = Yaml::Hash(Default::default());
        let mut node = match root.child("blochwave")? {
            Some(node) => node,
            None => Node::new(root.file, "blochwave".to_owned(), &empty)?,
        };
        let solver = node.choice("solver", &[("matrix_exp", SolverMethod::MatrixExp), ("bloch_eigen", SolverMethod::BlochEigen)], SolverMethod::MatrixExp)?;
        let absorption = node.bool_or("absorption", false)?;
        // BeamSelection's defaults (specs.py), not those of the scored selection.
        let rsg = node.f64_or("rsg", 0.66)?;
        if !(rsg > 0.0) {
            return Err(node.error("rsg", format!("must be positive (got {rsg})")));
        }
        let dsg = node.f64_or("dsg", 0.0015)?;
        if !dsg.is_finite() {
            return Err(node.error("dsg", format!("must be finite (got {dsg})")));
        }
        let rocking_curve_sampling = node.usize_or("rocking_curve_sampling", 42)?;
        if rocking_curve_sampling < 1 {
            return Err(node.error("rocking_curve_sampling", "must be >= 1"));
        }
        let mosaicity = node.bool_or("mosaicity", false)?;
        let fixed_n_segments = node.usize_or("fixed_n_segments", 12)?;
        if fixed_n_segments < 1 {
            return Err(node.error("fixed_n_segments", "must be >= 1"));
        }
        let coupling_mode = node.choice("coupling_mode", &[("union", CouplingMode::Union), ("per_tilt", CouplingMode::PerTilt)], CouplingMode::Union)?;
        let g_max = node.f64_or("g_max", 2.25)?;
        positive(&node, "g_max", g_max)?;
        let sg_max = node.f64_or("sg_max", 0.01)?;
        positive(&node, "sg_max", sg_max)?;
        let union_adaptive = node.bool_or("union_adaptive", true)?;
        let union_max_new_beams_pct = node.f64_or("union_max_new_beams_pct", 0.01)?;
        if !(union_max_new_beams_pct > 0.0 && union_max_new_beams_pct <= 1.0) {
            return Err(node.error("union_max_new_beams_pct", format!("must be in (0, 1] (got {union_max_new_beams_pct})")));
        }
        let ignore_orientations = node.usize_list_or("ignore_orientations")?;
        let mut sorted = ignore_orientations.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(node.error("ignore_orientations", "must not contain duplicate indices"));
        }
        if absorption && solver == SolverMethod::BlochEigen {
            return Err(node.error("absorption", "requires the non-Hermitian-safe 'matrix_exp' solver"));
        }
        node.finish()?;
        Ok(Blochwave {
            solver,
            absorption,
            rsg,
            dsg,
            rocking_curve_sampling,
            mosaicity,
            fixed_n_segments,
            coupling_mode,
            g_max,
            sg_max,
            union_adaptive,
            union_max_new_beams_pct,
            ignore_orientations,
        })
    }

    fn preprocess(root: &mut Node<'_>) -> Result<Preprocess, RefineError> {
        let empty = Yaml::Hash(Default::default());
        let mut node = match root.child("preprocess")? {
            Some(node) => node,
            None => Node::new(root.file, "preprocess".to_owned(), &empty)?,
        };
        let optimize_orientation = node.bool_or("optimize_orientation", true)?;
        let optimize_thickness = node.bool_or("optimize_thickness", true)?;
        let stage_order =
            node.choice("stage_order", &[("thickness_first", StageOrder::ThicknessFirst), ("orientation_first", StageOrder::OrientationFirst)], StageOrder::ThicknessFirst)?;
        let mut nelder_mead = NelderMead { step_size: 0.05, max_iterations: 60, x_tolerance: 1e-3, f_tolerance: 1e-3, penalize_fewer_reflections: true };
        if let Some(mut orientation) = node.child("orientation")? {
            if let Some(mut nm) = orientation.child("nelder_mead")? {
                nelder_mead.step_size = nm.positive_or("step_size", nelder_mead.step_size)?;
                nelder_mead.max_iterations = nm.usize_or("max_iterations", nelder_mead.max_iterations)?;
                if nelder_mead.max_iterations < 1 {
                    return Err(nm.error("max_iterations", "must be >= 1"));
                }
                nelder_mead.x_tolerance = nm.positive_or("x_tolerance", nelder_mead.x_tolerance)?;
                nelder_mead.f_tolerance = nm.positive_or("f_tolerance", nelder_mead.f_tolerance)?;
                nelder_mead.penalize_fewer_reflections = nm.bool_or("penalize_fewer_reflections", true)?;
                nm.finish()?;
            }
            orientation.finish()?;
        }
        let mut thickness = ThicknessGrid { min_thickness: 5.0, max_thickness: 2000.0, n_steps: 100, plot: false };
        if let Some(mut t) = node.child("thickness")? {
            thickness.min_thickness = t.positive_or("min_thickness", 5.0)?;
            thickness.max_thickness = t.positive_or("max_thickness", 2000.0)?;
            if thickness.max_thickness <= thickness.min_thickness {
                return Err(t.error("max_thickness", "must exceed min_thickness"));
            }
            thickness.n_steps = t.usize_or("n_steps", 100)?;
            if thickness.n_steps < 1 {
                return Err(t.error("n_steps", "must be >= 1"));
            }
            thickness.plot = t.bool_or("plot", false)?;
            t.finish()?;
        }
        node.finish()?;
        Ok(Preprocess { optimize_orientation, optimize_thickness, stage_order, nelder_mead, thickness })
    }

    fn refinement(root: &mut Node<'_>) -> Result<Refinement, RefineError> {
        let empty = Yaml::Hash(Default::default());
        let mut node = match root.child("refinement")? {
            Some(node) => node,
            None => Node::new(root.file, "refinement".to_owned(), &empty)?,
        };
        let steps = node.usize_or("steps", 40)?;
        let selection = [("all", Selection::All), ("none", Selection::None)];
        let mut trainable = Trainable { positions: Selection::All, adp: Selection::All, occupancy: Selection::None };
        if let Some(mut t) = node.child("trainable")? {
            trainable.positions = t.choice("positions", &selection, Selection::All)?;
            trainable.adp = t.choice("adp", &selection, Selection::All)?;
            trainable.occupancy = t.choice("occupancy", &selection, Selection::None)?;
            t.finish()?;
        }
        let (mut optimizer, mut lr) = (OptimizerName::Adam, 1e-3);
        if let Some(mut o) = node.child("optimizer")? {
            optimizer = o.choice("name", &[("lbfgs", OptimizerName::Lbfgs), ("adam", OptimizerName::Adam), ("adamw", OptimizerName::Adamw)], OptimizerName::Adam)?;
            lr = o.f64_or("lr", 1e-3)?;
            o.finish()?;
        }
        let mut split = Split { train_test: false, val_frac: 0.2 };
        if let Some(mut s) = node.child("split")? {
            split.train_test = s.bool_or("train_test", false)?;
            split.val_frac = s.f64_or("val_frac", 0.2)?;
            if !(split.val_frac > 0.0 && split.val_frac < 1.0) {
                return Err(s.error("val_frac", "must be between 0 and 1 (exclusive)"));
            }
            s.finish()?;
        }
        // ApparentThicknessNetwork's defaults (specs.py): enabled unless the YAML says otherwise.
        let mut thickness_nn =
            ThicknessNn { enabled: true, num_samples: 40, sample_thickness: false, form: "min_thickness".to_owned(), min_thickness: 100.0, max_thickness: 2000.0, init_seed: 0 };
        if let Some(mut t) = node.child("thickness_nn")? {
            thickness_nn.enabled = t.bool_or("enabled", true)?;
            thickness_nn.num_samples = t.usize_or("num_samples", 40)?;
            if thickness_nn.num_samples < 1 {
                return Err(t.error("num_samples", "must be >= 1"));
            }
            thickness_nn.sample_thickness = t.bool_or("sample_thickness", false)?;
            if let Some(form) = t.string("form")? {
                if form != "min_thickness" {
                    return Err(t.error("form", format!("only 'min_thickness' is supported (got {form:?})")));
                }
            }
            thickness_nn.min_thickness = t.positive_or("min_thickness", 100.0)?;
            thickness_nn.max_thickness = t.f64_or("max_thickness", 2000.0)?;
            if !(thickness_nn.max_thickness > thickness_nn.min_thickness) {
                return Err(t.error("max_thickness", "must exceed min_thickness"));
            }
            thickness_nn.init_seed = t.i64_or("init_seed", 0)?;
            t.finish()?;
        }
        node.finish()?;
        Ok(Refinement { steps, trainable, optimizer, lr, split, thickness_nn })
    }

    fn cross_checks(&self, file: &str) -> Result<(), RefineError> {
        let keys: Vec<&String> = self.sample.mean_thickness_by_dataset.keys().collect();
        if !keys.is_empty() {
            let err = |m: String| RefineError::Yaml { file: file.to_owned(), key: "sample.mean_thickness_by_dataset".to_owned(), message: m };
            if !self.inputs.multi_dataset {
                return Err(err("requires inputs.multi_dataset=true".to_owned()));
            }
            let mut expected: Vec<&String> = self.inputs.exp_data.iter().collect();
            expected.sort();
            if keys != expected {
                return Err(err("keys must exactly match inputs.exp_data".to_owned()));
            }
        }
        Ok(())
    }

    /// Refuses, naming the key, every setting whose behaviour this crate does not reproduce yet,
    /// so that a metric or a refinement is never silently computed under another recipe than
    /// diffBloch's. (Preprocessing fits, the thickness network and the optimizer choice are not
    /// refused here: they concern the refinement stage, not the geometry or the metric.)
    pub fn check_supported(&self) -> Result<(), RefineError> {
        let unsupported = |key: &str, message: &str| Err(RefineError::Unsupported { key: key.to_owned(), message: message.to_owned() });
        if self.inputs.multi_dataset {
            return unsupported("inputs.multi_dataset", "pooling several PETS files is not implemented yet");
        }
        if self.inputs.isotropic_displacements_only {
            return unsupported("inputs.isotropic_displacements_only", "forcing U_iso (from U_eq) is not implemented yet");
        }
        if self.blochwave.mosaicity {
            return unsupported("blochwave.mosaicity", "mosaic smoothing of the rocking curve is not implemented yet");
        }
        if self.refinement.split.train_test {
            return unsupported("refinement.split.train_test", "the train/validation split is not implemented yet");
        }
        if self.sample.thicknesses.len() != 1 {
            return unsupported("sample.thicknesses", "a thickness series (the per-rotation best-thickness pick) is not implemented yet; give one thickness");
        }
        Ok(())
    }
}
